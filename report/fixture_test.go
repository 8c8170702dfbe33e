package report

import (
	"io"
	"os"
	"path/filepath"

	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules"
)

// Objects of the fixture.
var (
	deployWeb  = manifest.Ref{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "shop", Name: "web"}
	serviceWeb = manifest.Ref{APIVersion: "v1", Kind: "Service", Namespace: "shop", Name: "web"}
	configMap  = manifest.Ref{APIVersion: "v1", Kind: "ConfigMap", Namespace: "shop", Name: "settings"}
	namespace  = manifest.Ref{APIVersion: "v1", Kind: "Namespace", Name: "shop"}
	policy     = manifest.Ref{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingAdmissionPolicy", Name: "require-labels"}
	jobTrain   = manifest.Ref{APIVersion: "batch/v1", Kind: "Job", Namespace: "shop", Name: "train"}
)

// Files of the fixture; jobFile needs escaping in URIs and workflow commands.
const (
	cleanFile  = "deploy/clean.yaml"
	webFile    = "deploy/web.yaml"
	policyFile = "policies/labels.yaml"
	jobFile    = "sub dir/job, one.yaml"
)

// specialMessage has every character some format must escape.
const specialMessage = "container \"app\" must set securityContext.capabilities.drop=[\"ALL\"]: " +
	"100% <unrestricted> & 'added' NET_RAW,SYS_ADMIN\nsecond line\r\nthird line"

// fixture is a result as the engine would produce it: several files (one
// without findings), every severity, suppressed findings of both kinds, a
// finding without a field, one without an object, one without a file whose
// rule is not in Rules, a message full of special characters, and findings
// judged at an assumed Pod Security level (one of them suppressed).
func fixture() *rules.Result {
	res := &rules.Result{
		Rules: []*rules.Rule{
			{ID: "api/no-kind", Severity: rules.Warning, Summary: "Every document has apiVersion and kind"},
			{ID: "jobset/failure-policy", Severity: rules.Warning, Summary: "JobSets set a failure policy",
				Doc: "Without a failure policy a JobSet restarts forever."},
			{ID: "policy/require-labels", Severity: rules.Info, Summary: "Objects carry app.kubernetes.io/name",
				Doc: "Labels <b>matter</b> & tools rely on them: add `app.kubernetes.io/name`."},
			{ID: "psa/capabilities_restricted", Severity: rules.Error, Summary: "Containers drop ALL capabilities",
				Doc:  "The restricted profile requires dropping ALL capabilities; only NET_BIND_SERVICE may be added.",
				Fail: "securityContext: {}\n", Pass: "securityContext:\n  capabilities: {drop: [ALL]}\n"},
			{ID: "psa/runAsNonRoot", Severity: rules.Error, Summary: "Pods run as non-root",
				Doc: "Set runAsNonRoot: true on the pod or every container."},
			{ID: "sidecar/native", Severity: rules.Warning, Summary: "Sidecars are native sidecars"},
		},
		Files: []rules.FileObjects{
			{File: cleanFile, Objects: []manifest.Ref{namespace, configMap}},
			{File: webFile, Objects: []manifest.Ref{deployWeb, serviceWeb}},
			{File: policyFile, Objects: []manifest.Ref{policy}},
			{File: jobFile, Objects: []manifest.Ref{jobTrain}},
		},
		Findings: []rules.Finding{
			{Rule: "config/unknown-rule", Severity: rules.Warning,
				Message: `.kiln.yaml names rule "psa/nope", which no checker declares`},
			{Rule: "psa/runAsNonRoot", Severity: rules.Error, Pos: pos(webFile, 8, 3), Object: deployWeb,
				Field:   "spec.template.spec.securityContext",
				Message: `pod or containers "app", "envoy" must set securityContext.runAsNonRoot=true`,
				Fix:     &rules.Fix{Action: rules.FixRunAsNonRoot, Template: "spec.template"}},
			{Rule: "psa/capabilities_restricted", Severity: rules.Error, Pos: pos(webFile, 12, 11), Object: deployWeb,
				Field: "spec.template.spec.containers[0].securityContext", Message: specialMessage},
			{Rule: "sidecar/native", Severity: rules.Warning, Pos: pos(webFile, 20, 7), Object: deployWeb,
				Field:      "spec.template.spec.containers[1]",
				Message:    `container "envoy" runs as a plain sidecar`,
				Suppressed: &rules.Suppression{Kind: "annotation", Reason: "migrating in Q3: see OPS-12, OPS-13"}},
			{Rule: "policy/require-labels", Severity: rules.Info, Pos: pos(webFile, 30, 1), Object: serviceWeb,
				Message: "Service web has no app.kubernetes.io/name label"},
			{Rule: "policy/require-labels", Severity: rules.Warning, Pos: pos(policyFile, 3, 5), Object: policy,
				Field:   "spec.validations[0].expression",
				Message: "compile error: undeclared reference to 'objec'"},
			{Rule: "psa/runAsNonRoot", Severity: rules.Error, Pos: pos(jobFile, 5, 3), Object: jobTrain,
				Field:            "spec.template.spec",
				Message:          `pod or container "train" must set securityContext.runAsNonRoot=true`,
				Suppressed:       &rules.Suppression{Kind: "config"},
				Fix:              &rules.Fix{Action: rules.FixRunAsNonRoot, Template: "spec.template"}, // suppressed: not counted as fixable
				AssumedNamespace: "ml"},                                                                // nor as assumed
			{Rule: "api/no-kind", Severity: rules.Warning, Pos: pos(jobFile, 9, 1),
				Message: "document 2 has no kind; it is skipped"},
			{Rule: "psa/capabilities_restricted", Severity: rules.Error, Pos: pos(jobFile, 14, 9), Object: jobTrain,
				Field:            "spec.template.spec.containers[0].securityContext.capabilities.add",
				Message:          `container "train" must not include "SYS_ADMIN" in securityContext.capabilities.add`,
				AssumedNamespace: "shop"},
		},
	}
	res.Summary = summarize(res)
	return res
}

// fixtureSource opens the fixture's files from testdata/source (where
// policyFile is missing, as if deleted since the run).
func fixtureSource(name string) (io.ReadCloser, error) {
	return os.Open(filepath.Join("testdata", "source", name))
}

func pos(file string, line, col int) manifest.Position {
	return manifest.Position{File: file, Line: line, Column: col}
}

// summarize counts as the engine does.
func summarize(res *rules.Result) rules.Summary {
	s := rules.Summary{Files: len(res.Files)}
	for _, fo := range res.Files {
		s.Objects += len(fo.Objects)
	}
	for _, f := range res.Findings {
		if f.AssumedNamespace != "" && f.Suppressed == nil {
			s.Assumed++
		}
		switch {
		case f.Suppressed != nil:
			s.Suppressed++
		case f.Severity == rules.Error:
			s.Errors++
		case f.Severity == rules.Warning:
			s.Warnings++
		default:
			s.Infos++
		}
	}
	return s
}

// empty is a run that read one file with one clean object.
func empty() *rules.Result {
	res := &rules.Result{Files: []rules.FileObjects{{File: cleanFile, Objects: []manifest.Ref{configMap}}}}
	res.Summary = summarize(res)
	return res
}
