// Package sidecar holds kiln's sidecar rules (sidecar/…): long-running
// helpers in the wrong place, and native sidecars (init containers with
// restartPolicy: Always) that the target Kubernetes version or the API
// would not run as intended.
//
// Every rule is single-object: each check is one small function of
// one object, so that it can later be written as a ValidatingAdmissionPolicy
// (only the helper-image table and the target version are inputs from outside).
package sidecar

import (
	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules"
	"github.com/kilnhq/kiln/rules/internal/podutil"
)

// Rule IDs.
const (
	ClassicInJob             = "sidecar/classic-in-job"
	RestartPolicyOnContainer = "sidecar/restart-policy-on-container"
	ProbeOnInit              = "sidecar/probe-on-init"
	Needs129                 = "sidecar/needs-1.29"
	NoStartupGate            = "sidecar/no-startup-gate"
	ClassicSidecar           = "sidecar/classic-sidecar"
)

// Checker reports the sidecar rules.
var Checker = &rules.Checker{Name: "sidecar", Rules: ruleList, Run: run}

func init() { rules.Register(Checker) }

// Versions that gate native sidecars and per-container restart policies.
var (
	// SidecarContainers: alpha in 1.28 (gate off by default), beta and on in 1.29 (KEP-753).
	sidecarAlpha = manifest.KubeVersion{Major: 1, Minor: 28}
	sidecarBeta  = manifest.KubeVersion{Major: 1, Minor: 29}
	// ContainerRestartRules: alpha in 1.34 (gate off by default), beta and on in 1.35 (KEP-5307).
	restartRulesAlpha = manifest.KubeVersion{Major: 1, Minor: 34}
	restartRulesBeta  = manifest.KubeVersion{Major: 1, Minor: 35}
)

// report is how a single-object check reports: the field at fault and a message.
type report func(field, msg string)

// check is one single-object rule.
type check struct {
	rule string
	fn   func(o *manifest.Object, content map[string]any, kube manifest.KubeVersion, r report)
}

var checks = []check{
	{ClassicInJob, checkClassicInJob},
	{RestartPolicyOnContainer, checkRestartPolicyOnContainer},
	{ProbeOnInit, checkProbeOnInit},
	{Needs129, checkNeeds129},
	{NoStartupGate, checkNoStartupGate},
	{ClassicSidecar, checkClassicSidecar},
}

func run(p *rules.Pass) error {
	for _, o := range p.Objects {
		if !manifest.IsWorkload(o) {
			continue
		}
		content, err := o.Content()
		if err != nil || content == nil {
			continue // the reader reports undecodable objects
		}
		for _, c := range checks {
			c.fn(o, content, p.Options.KubeVersion, func(field, msg string) {
				p.Report(rules.Diagnostic{Rule: c.rule, Object: o, Field: field, Message: msg})
			})
		}
	}
	return nil
}

// runsToCompletion reports whether the pods of a template are meant to exit:
// Job, CronJob and JobSet pods, and bare Pods with restartPolicy Never or OnFailure.
func runsToCompletion(o *manifest.Object, content map[string]any, t manifest.PodTemplate) bool {
	switch {
	case o.Group() == "batch" && (o.Kind == "Job" || o.Kind == "CronJob"):
		return true
	case o.Group() == manifest.JobSetGroup && o.Kind == "JobSet":
		return true
	case o.Group() == "" && o.Kind == "Pod":
		rp := podutil.Str(podutil.Spec(content, t.SpecPath()), "restartPolicy")
		return rp == "Never" || rp == "OnFailure"
	}
	return false
}

// longRunning reports whether the pods of a template are meant to run until
// replaced: Deployments, ReplicaSets, ReplicationControllers, StatefulSets,
// DaemonSets, and bare Pods with restartPolicy Always (the default).
func longRunning(o *manifest.Object, content map[string]any, t manifest.PodTemplate) bool {
	switch {
	case o.Group() == "" && o.Kind == "Pod":
		rp := podutil.Str(podutil.Spec(content, t.SpecPath()), "restartPolicy")
		return rp == "" || rp == "Always"
	case o.Group() == "" && o.Kind == "ReplicationController":
		return true
	case o.Group() == "apps" || o.Group() == "extensions":
		return o.Kind != "ControllerRevision"
	}
	return false
}

// classicHelpers returns the regular containers that run a known helper
// image, provided the pod also has a regular container that is not a
// helper (the app): a pod made only of helpers is doing the helper's job.
func classicHelpers(content map[string]any, t manifest.PodTemplate) (found []podutil.Container, what []string) {
	app := false
	for _, c := range podutil.Containers(content, t.SpecPath()) {
		if c.Init {
			continue
		}
		if w := KnownHelper(c.Image); w != "" {
			found = append(found, c)
			what = append(what, w)
		} else {
			app = true
		}
	}
	if !app {
		return nil, nil
	}
	return found, what
}
