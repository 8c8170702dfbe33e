// Package psa judges pod templates with Pod Security Admission as the API
// server does: k8s.io/pod-security-admission's own checks, at the levels and
// versions the Namespace labels in the input ask for.
//
// Every upstream check is a rule "psa/<check ID>". A template of any workload
// kind (Pod, PodTemplate, ReplicationController, Deployment, ReplicaSet,
// StatefulSet, DaemonSet, Job, CronJob, JobSet) is decoded the way the API
// server decodes it and given the server defaults that change verdicts.
// enforce failures are errors, warn and audit failures warnings. A workload
// whose Namespace is not in the input is judged at the levels the
// configuration gives that namespace (Options.PSANamespaces), else
// privileged in kube-system, kube-public and kube-node-lease (as a cluster
// leaves them), else at the assumed Options.PSALevel and PSAVersion as
// enforce, which every such finding says.
package psa

import (
	"fmt"
	"sync"

	"github.com/kilnhq/kiln/admit"
	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules"
	"k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"
)

// Rule IDs that are not upstream checks.
const (
	// InvalidLabelRule reports a pod-security.kubernetes.io/* label value upstream cannot parse.
	InvalidLabelRule = "psa/invalid-label"
	// DecodeRule reports a pod template the API server would reject when decoding it.
	DecodeRule = "psa/decode"
	// NotOnRule notes, once per kind, workloads not judged because the
	// target Kubernetes version does not run Pod Security admission.
	NotOnRule = "psa/not-on"
)

// onSince is the first release whose API server runs the PodSecurity
// admission plugin by default (beta in 1.23; alpha behind the PodSecurity
// feature gate, off, in 1.22).
var onSince = manifest.KubeVersion{Major: 1, Minor: 23}

// RuleID returns the rule ID of an upstream check.
func RuleID(id policy.CheckID) string { return "psa/" + string(id) }

// Checker is the Pod Security checker, named "psa".
var Checker = &rules.Checker{Name: "psa", Rules: buildRules(policy.DefaultChecks()), Prepare: prepare, Requires: []rules.Context{rules.Namespaces}}

var (
	judgeOnce sync.Once
	theJudge  *judge
	judgeErr  error
)

func sharedJudge() (*judge, error) {
	judgeOnce.Do(func() { theJudge, judgeErr = newJudge(policy.DefaultChecks()) })
	return theJudge, judgeErr
}

// mode is one Pod Security mode of a namespace and the severity its failures get.
type mode struct {
	lv       api.LevelVersion
	severity rules.Severity
}

// prepare reads the Namespaces' Pod Security labels and returns the judge of
// one workload.
func prepare(pass *rules.Pass) (rules.Judge, error) {
	undeclared, err := newUndeclared(pass.Options)
	if err != nil {
		return nil, err
	}
	if o := pass.Options; o != nil && o.KubeVersion != (manifest.KubeVersion{}) && o.KubeVersion.Less(onSince) {
		return notOn(pass), nil
	}
	j, err := sharedJudge()
	if err != nil {
		return nil, err
	}
	namespaces := namespaceModes(pass)
	return func(o *manifest.Object) {
		ns := o.Namespace
		if ns == "" {
			ns = "default"
		}
		if modes, ok := namespaces[ns]; ok {
			checkObject(pass, j, o, modes, "")
			return
		}
		modes, how := undeclared.modes(ns)
		assumed := ""
		if how == assumedLevel {
			assumed = ns
		}
		checkObject(pass, j, o, modes, assumed)
	}, nil
}

// fallbackPolicy is the policy kiln assumes for a namespace that neither
// the input nor the configuration declares: --psa-level at --psa-version,
// as enforce.
func fallbackPolicy(opts *rules.Options) (api.Policy, error) {
	level, version := "restricted", "latest"
	if opts != nil && opts.PSALevel != "" {
		level = opts.PSALevel
	}
	if opts != nil && opts.PSAVersion != "" {
		version = opts.PSAVersion
	}
	l, err := api.ParseLevel(level)
	if err != nil {
		return api.Policy{}, fmt.Errorf("Pod Security level %q: %v", level, err)
	}
	v, err := api.ParseVersion(version)
	if err != nil {
		return api.Policy{}, fmt.Errorf("Pod Security version %q: %v", version, err)
	}
	return api.Policy{Enforce: api.LevelVersion{Level: l, Version: v}}, nil
}

// activeModes lists the non-privileged modes of a policy, enforce first.
func activeModes(p api.Policy) []mode {
	var out []mode
	for _, m := range []mode{{p.Enforce, rules.Error}, {p.Warn, rules.Warning}, {p.Audit, rules.Warning}} {
		if m.lv.Level != "" && m.lv.Level != api.LevelPrivileged {
			out = append(out, m)
		}
	}
	return out
}

// checkObject judges every pod template of an object. assumed names the
// object's namespace when its modes are the assumed level: each failure
// then says so.
func checkObject(pass *rules.Pass, j *judge, o *manifest.Object, modes []mode, assumed string) {
	if len(modes) == 0 {
		return
	}
	tmpls := manifest.PodTemplatesOf(o)
	if len(tmpls) == 0 {
		return
	}
	content, err := o.Content()
	if err != nil {
		pass.Report(rules.Diagnostic{Rule: DecodeRule, Object: o, Message: err.Error()})
		return
	}
	for _, t := range tmpls {
		prefix := ""
		if o.Kind == "JobSet" && o.Group() == manifest.JobSetGroup {
			prefix = fmt.Sprintf("replicated job %q: ", t.Name)
		}
		meta, spec, err := decodeTemplate(content, t)
		if err != nil {
			pass.Report(decodeDiagnostic(o, t, prefix, err))
			continue
		}
		type found struct {
			failure
			severity rules.Severity
		}
		var order []policy.CheckID
		worst := map[policy.CheckID]found{}
		seen := map[api.LevelVersion]bool{}
		for _, m := range modes {
			if seen[m.lv] {
				continue // an earlier mode at the same level and version had a higher or equal severity
			}
			seen[m.lv] = true
			fails, err := j.evaluate(m.lv, meta, spec)
			if err != nil {
				pass.Report(rules.Diagnostic{Rule: DecodeRule, Object: o, Field: t.SpecPath(), Message: prefix + err.Error()})
				continue
			}
			for _, f := range fails {
				prev, ok := worst[f.check.id]
				if !ok {
					order = append(order, f.check.id)
				}
				if !ok || m.severity > prev.severity {
					worst[f.check.id] = found{f, m.severity}
				}
			}
		}
		for _, id := range order {
			f := worst[id]
			field := locate(f.check, meta, spec)
			msg := prefix + message(f.result)
			if o.Refused {
				// The server refuses the object in validation, before
				// admission: Pod Security judges it only once that is fixed.
				msg += admit.NextSuffix
			}
			if assumed != "" {
				msg += " " + assumedNote(assumed, modes)
			}
			pass.Report(rules.Diagnostic{
				Rule:             RuleID(id),
				Severity:         f.severity,
				Message:          msg,
				Object:           o,
				Field:            join(t.Path, field),
				Fix:              fixOn(RuleID(id), t.Path, spec),
				AssumedNamespace: assumed,
			})
		}
	}
}

// message formats a check result as upstream does for a single object: "reason (detail)".
func message(r policy.CheckResult) string {
	reason := r.ForbiddenReason
	if reason == "" {
		reason = policy.UnknownForbiddenReason
	}
	if r.ForbiddenDetail == "" {
		return reason
	}
	return reason + " (" + r.ForbiddenDetail + ")"
}

func join(a, b string) string {
	if a == "" {
		return b
	}
	return a + "." + b
}

// notOn is the judge at a target that does not run Pod Security admission:
// the server admits every pod as it is, so nothing is judged, and one info
// note per workload kind says so.
func notOn(pass *rules.Pass) rules.Judge {
	first := pass.FirstOfKind("not-on")
	pass.Finish(func() {
		kube := pass.Options.KubeVersion
		first.Each(func(m *rules.Mark, _ string, count int) {
			what := fmt.Sprintf("this %s is", m.Ref.Kind)
			if count > 1 {
				what = fmt.Sprintf("this %s and %d more are", m.Ref.Kind, count-1)
			}
			pass.Report(rules.Diagnostic{Rule: NotOnRule, At: m, Message: fmt.Sprintf(
				"Kubernetes %s does not run Pod Security admission (on by default from %s; alpha behind the PodSecurity feature gate in 1.22): %s not judged against Pod Security levels; lint with --kube-version %s or later to see what a newer cluster would refuse",
				kube, onSince, what, onSince)})
		})
	})
	return func(o *manifest.Object) {
		if len(manifest.PodTemplatesOf(o)) > 0 {
			first.Note(pass, o, "", "")
		}
	}
}
