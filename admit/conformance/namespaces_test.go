package conformance

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules"
	"github.com/kilnhq/kiln/rules/psa"
)

// bootstrapNamespaces are the namespaces a new API server creates itself.
var bootstrapNamespaces = map[string]bool{"default": true, "kube-system": true, "kube-public": true, "kube-node-lease": true}

// Pod Security labels.
const (
	enforceLabel        = "pod-security.kubernetes.io/enforce"
	enforceVersionLabel = "pod-security.kubernetes.io/enforce-version"
)

// assumedLevels asks kiln at which Pod Security level it judges the
// workloads of each namespace the input does not define: it lints, with
// the run's options, a Pod in each that fails only the restricted level and
// one that fails the baseline level too. The level is the lowest whose Pod
// kiln denies (enforce is the only mode kiln assumes); the version is the
// options' --psa-version.
func assumedLevels(t *testing.T, opts *rules.Options, namespaces []string) map[string]string {
	t.Helper()
	if len(namespaces) == 0 {
		return nil
	}
	var b strings.Builder
	for _, ns := range namespaces {
		fmt.Fprintf(&b, "---\napiVersion: v1\nkind: Pod\nmetadata: {name: restricted, namespace: %q}\nspec: {containers: [{name: c, image: x}]}\n", ns)
		fmt.Fprintf(&b, "---\napiVersion: v1\nkind: Pod\nmetadata: {name: baseline, namespace: %q}\nspec: {containers: [{name: c, image: x, securityContext: {privileged: true}}]}\n", ns)
	}
	file := filepath.Join(t.TempDir(), "probes.yaml")
	if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	set := manifest.Read([]string{file}, nil)
	if errs := set.Errors(); len(errs) > 0 {
		t.Fatalf("probe Pods: %v", errs)
	}
	eng := &rules.Engine{Checkers: []*rules.Checker{psa.Checker}, Options: opts, Config: &rules.Config{}}
	res, err := eng.Run(set.Objects(), nil)
	if err != nil {
		t.Fatalf("probe Pods: %v", err)
	}
	denied := map[manifest.Ref]bool{}
	for _, f := range res.Findings {
		if f.Severity == rules.Error && strings.HasPrefix(f.Rule, "psa/") {
			denied[f.Object] = true
		}
	}
	out := map[string]string{}
	for _, ns := range namespaces {
		pod := func(name string) manifest.Ref {
			return manifest.Ref{APIVersion: "v1", Kind: "Pod", Namespace: ns, Name: name}
		}
		switch {
		case denied[pod("restricted")]:
			out[ns] = "restricted"
		case denied[pod("baseline")]:
			out[ns] = "baseline"
		default:
			out[ns] = "privileged"
		}
	}
	return out
}

// ensureNamespaces creates the namespaces objects live in that the corpus
// does not define (and labels the server's own, default and kube-system
// among them) with the Pod Security level kiln assumed for each, as
// enforce, so that the server judges them as kiln did. It returns the
// levels, for the report.
func ensureNamespaces(t *testing.T, s *apiServer, objs []*judged, opts *rules.Options) map[string]string {
	t.Helper()
	defined := map[string]bool{}
	for _, j := range objs {
		if isNamespace(j.obj) {
			defined[j.obj.Name] = true
		}
	}
	need := map[string]bool{"default": true}
	for _, j := range objs {
		if j.obj.Namespace != "" {
			need[j.obj.Namespace] = true
		}
	}
	var names []string
	for ns := range need {
		if !defined[ns] {
			names = append(names, ns)
		}
	}
	sort.Strings(names)
	levels := assumedLevels(t, opts, names)
	version := opts.PSAVersion
	if version == "" {
		version = "latest"
	}
	for _, ns := range names {
		labels := map[string]string{enforceLabel: levels[ns], enforceVersionLabel: version}
		if bootstrapNamespaces[ns] {
			labelNamespace(t, s, ns, labels)
			continue
		}
		body := fmt.Sprintf(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":%q,"labels":{%q:%q,%q:%q}}}`, ns, enforceLabel, levels[ns], enforceVersionLabel, version)
		if code, b, _, err := s.do("POST", "/api/v1/namespaces", []byte(body)); err != nil || code != 201 {
			t.Fatalf("namespace %s: %d %s %v", ns, code, status(b), err)
		}
	}
	return levels
}

// labelNamespace sets labels on a namespace the server created itself, as
// `kubectl apply` of a Namespace with them would.
func labelNamespace(t *testing.T, s *apiServer, ns string, labels map[string]string) {
	t.Helper()
	var kv []string
	for k, v := range labels {
		kv = append(kv, fmt.Sprintf("%q:%q", k, v))
	}
	sort.Strings(kv)
	patch := `{"metadata":{"labels":{` + strings.Join(kv, ",") + `}}}`
	if code, b, _, err := s.doPatch("/api/v1/namespaces/"+ns, []byte(patch)); err != nil || code != 200 {
		t.Fatalf("labelling namespace %s: %d %s %v", ns, code, status(b), err)
	}
}

// isNamespace reports a Namespace object.
func isNamespace(o *manifest.Object) bool { return o.APIVersion == "v1" && o.Kind == "Namespace" }
