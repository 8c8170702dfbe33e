// Package jobset holds kiln's JobSet rules (jobset/…) for
// jobset.x-k8s.io/v1alpha2 JobSets: torchrun sizes that do not match the
// pods that run them, GPU requests and limits, generated names that exceed
// 63 characters, dependsOn and successPolicy references, and replicated jobs
// that others reach by hostname without Indexed completion.
//
// Every rule is single-object (it reads one JobSet). All but
// torchrun-nnodes and rwo-claim-policy are written as
// ValidatingAdmissionPolicies in rules/policies; rwo-claim-policy stays in
// Go beside the storage rules' wording, and torchrun-nnodes because it tokenises shell
// command lines ("bash -c 'torchrun --nnodes=8 …'"), takes a flag's value
// from the next element, and expands $(VAR) references from the
// container's env, which CEL cannot do without weakening the rule.
package jobset

import (
	"strconv"

	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules"
	"github.com/kilnhq/kiln/rules/internal/podutil"
)

// Rule IDs. Only torchrun-nnodes is implemented here; the others are
// ValidatingAdmissionPolicies in rules/policies (jobset-*.yaml), with their
// fixtures here in testdata/<rule>/.
const (
	TorchrunNnodes = "jobset/torchrun-nnodes"
	GPULimits      = "jobset/gpu-limits"
	NameLength     = "jobset/name-length"
	DependsOn      = "jobset/depends-on"
	SuccessTargets = "jobset/success-targets"
	Indexed        = "jobset/indexed"
	RWOClaimPolicy = "jobset/rwo-claim-policy"
)

// Checker reports the jobset rules.
var Checker = &rules.Checker{Name: "jobset", Rules: ruleList, Prepare: prepare}

// jobSet is what torchrun-nnodes needs from a JobSet, with field paths.
type jobSet struct {
	rjobs  []*rjob
	claims []*sharedClaim
}

// sharedClaim is one template of spec.volumeClaimPolicies: the JobSet
// controller creates one claim from it, shared by every pod that mounts a
// volume of its name.
type sharedClaim struct {
	path  string // spec.volumeClaimPolicies[i].templates[j]
	name  string
	modes []string
}

// rjob is one replicated job.
type rjob struct {
	path        string // spec.replicatedJobs[i]
	name        string
	replicas    int64
	parallelism int64 // default 1
	containers  []podutil.Container
	// after are the replicated jobs this one starts after (dependsOn with status Complete).
	after []string
}

// pods is how many pods the replicated job runs at once: replicas × parallelism.
func (r *rjob) pods() int64 { return r.replicas * r.parallelism }

// field returns the path of a field below the replicated job.
func (r *rjob) field(f string) string { return r.path + "." + f }

func parse(content map[string]any) *jobSet {
	js := &jobSet{}
	for i, item := range podutil.List(podutil.Map(content, "spec"), "replicatedJobs") {
		m, _ := item.(map[string]any)
		if m == nil {
			continue
		}
		r := &rjob{path: "spec.replicatedJobs[" + strconv.Itoa(i) + "]", name: podutil.Str(m, "name"),
			replicas:    podutil.IntOr(m, "replicas", 1),
			parallelism: podutil.IntOr(podutil.Map(m, "template", "spec"), "parallelism", 1)}
		r.containers = podutil.Containers(content, r.field("template.spec.template.spec"))
		for _, d := range podutil.List(m, "dependsOn") {
			dm, _ := d.(map[string]any)
			if podutil.Str(dm, "status") == "Complete" {
				r.after = append(r.after, podutil.Str(dm, "name"))
			}
		}
		js.rjobs = append(js.rjobs, r)
	}
	for i, item := range podutil.List(podutil.Map(content, "spec"), "volumeClaimPolicies") {
		pm, _ := item.(map[string]any)
		for j, t := range podutil.List(pm, "templates") {
			tm, _ := t.(map[string]any)
			c := &sharedClaim{path: "spec.volumeClaimPolicies[" + strconv.Itoa(i) + "].templates[" + strconv.Itoa(j) + "]",
				name: podutil.Str(podutil.Map(tm, "metadata"), "name")}
			for _, m := range podutil.List(podutil.Map(tm, "spec"), "accessModes") {
				if s, ok := m.(string); ok {
					c.modes = append(c.modes, s)
				}
			}
			js.claims = append(js.claims, c)
		}
	}
	return js
}

// report is how a check reports: an optional severity override (0: the
// rule's), the field at fault and a message.
type report func(sev rules.Severity, field, msg string)

var checks = []struct {
	rule string
	fn   func(js *jobSet, r report)
}{
	{TorchrunNnodes, checkTorchrun},
	{RWOClaimPolicy, checkClaimPolicies},
}

func prepare(p *rules.Pass) (rules.Judge, error) {
	return func(o *manifest.Object) {
		if o.Kind != "JobSet" || o.Group() != manifest.JobSetGroup {
			return
		}
		content, err := o.Content()
		if err != nil || content == nil {
			return
		}
		js := parse(content)
		for _, c := range checks {
			c.fn(js, func(sev rules.Severity, field, msg string) {
				p.Report(rules.Diagnostic{Rule: c.rule, Severity: sev, Object: o, Field: field, Message: msg})
			})
		}
	}, nil
}
