package psa

import (
	"fmt"
	"maps"
	"slices"
	"sort"

	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/pod-security-admission/api"
)

// Plan is a Pod Security rollout plan: for every namespace of an input, the
// strictest level every workload in it passes today, the labels that roll
// it out (audit, then warn, then enforce, as the upstream migration guide
// does it), and what blocks the next level. Verdicts come from the same
// upstream evaluator and decoding as the psa/* rules.
type Plan struct {
	// Version is the version of the JSON form (1).
	Version int `json:"version"`
	// Target is the Pod Security version the plan is for (the target Kubernetes minor), e.g. v1.37.
	Target     string          `json:"target"`
	Namespaces []NamespacePlan `json:"namespaces"`
}

// NamespacePlan is the plan for one namespace.
type NamespacePlan struct {
	Name string `json:"name"`
	// Defined is where the Namespace object is, or nil when it is not in the input.
	Defined *Location `json:"defined,omitempty"`
	// Current are its pod-security.kubernetes.io/* labels today: those of
	// the Namespace in the input, or for one not in the input those the
	// configuration gives it (psa.namespaces; Configured is then set).
	Current    map[string]string `json:"current,omitempty"`
	Configured bool              `json:"configured,omitempty"`
	// Assumed are the labels kiln lint judges a namespace with that neither
	// the input nor the configuration declares: the assumed level
	// (--psa-level, --psa-version), or privileged for kube-system,
	// kube-public and kube-node-lease.
	Assumed map[string]string `json:"assumed,omitempty"`
	// Level and LevelVersion: the strictest level every workload passes, at
	// the newest version where it does (Target unless only an older version passes).
	Level        string `json:"level"`
	LevelVersion string `json:"levelVersion"`
	// Steps are the label changes in order; Labels the set they end with.
	Steps  []Step            `json:"steps"`
	Labels map[string]string `json:"labels"`
	// Next is the next stricter level (at Target) and NextVersion its version;
	// empty when the namespace can enforce restricted at Target.
	Next        string `json:"next,omitempty"`
	NextVersion string `json:"nextVersion,omitempty"`
	// Workloads are the namespace's workloads, each with the checks that block Next.
	Workloads []WorkloadPlan `json:"workloads"`
	// FixReaches is the level and version ("restricted v1.37") the namespace
	// passes once kiln fix has repaired what it can: set when every check
	// that blocks Next is one kiln fix repairs (PlanOptions.Fixable).
	FixReaches string `json:"fixReaches,omitempty"`
	// LabelsAt is where to edit the labels of a Namespace defined in the
	// input (its metadata.labels, else its metadata): a GitOps controller
	// reverts a kubectl label on a Namespace kept in Git.
	LabelsAt *Location `json:"labelsAt,omitempty"`
}

// PlanOptions tune a plan.
type PlanOptions struct {
	// Fixable reports whether kiln fix repairs a rule's findings (nil: none).
	Fixable func(rule string) bool
	// Options are the run's options: the levels kiln lint gives namespaces
	// not in the input (PSANamespaces, PSALevel, PSAVersion); nil for the
	// defaults.
	Options *rules.Options
}

// Step is one label change of a rollout.
type Step struct {
	Mode   string            `json:"mode"`
	Labels map[string]string `json:"labels"`
	Why    string            `json:"why"`
}

// WorkloadPlan is one workload: the strictest level it passes at Target, and what blocks the namespace's next level.
type WorkloadPlan struct {
	Object   manifest.Ref `json:"object"`
	Pos      Location     `json:"pos"`
	Level    string       `json:"level"`
	Blocking []Blocker    `json:"blocking,omitempty"`
}

// Blocker is one failing check.
type Blocker struct {
	Rule    string   `json:"rule"`
	Message string   `json:"message"`
	Field   string   `json:"field,omitempty"`
	Pos     Location `json:"pos"`
	// Fixable is set when kiln fix repairs this check.
	Fixable bool `json:"fixable,omitempty"`
}

// Location is a place in a file.
type Location struct {
	File   string `json:"file"`
	Line   int    `json:"line"`
	Column int    `json:"column"`
}

func location(p manifest.Position) Location { return Location{p.File, p.Line, p.Column} }

// String formats the location as file:line:col.
func (l Location) String() string {
	return manifest.Position{File: l.File, Line: l.Line, Column: l.Column}.String()
}

// levels from the strictest.
var levels = []api.Level{api.LevelRestricted, api.LevelBaseline, api.LevelPrivileged}

// workload is a decoded workload: its pod templates, ready to judge.
type workload struct {
	obj   *manifest.Object
	tmpls []decodedTemplate
	err   string // the API server would reject a template; judged as failing every level but privileged
}

type decodedTemplate struct {
	t      manifest.PodTemplate
	prefix string
	meta   *metav1.ObjectMeta
	spec   *corev1.PodSpec
}

// NewPlan plans the namespaces of objs for the target Kubernetes version.
func NewPlan(objs []*manifest.Object, kube manifest.KubeVersion) (*Plan, error) {
	return NewPlanWith(objs, kube, PlanOptions{})
}

// NewPlanWith is NewPlan with options.
func NewPlanWith(objs []*manifest.Object, kube manifest.KubeVersion, opts PlanOptions) (*Plan, error) {
	j, err := sharedJudge()
	if err != nil {
		return nil, err
	}
	fallback, err := fallbackPolicy(opts.Options)
	if err != nil {
		return nil, err
	}
	target := api.MajorMinorVersion(kube.Major, kube.Minor)
	plan := &Plan{Version: 1, Target: target.String()}
	byNS := map[string]*NamespacePlan{}
	get := func(name string) *NamespacePlan {
		if byNS[name] == nil {
			byNS[name] = &NamespacePlan{Name: name}
		}
		return byNS[name]
	}
	var workloads = map[string][]*workload{}
	for _, o := range objs {
		if o.Kind == "Namespace" && o.Group() == "" && o.Name != "" {
			ns := get(o.Name)
			if ns.Defined == nil {
				pos := location(o.Pos())
				ns.Defined = &pos
				ns.Current = psaLabels(o.Labels)
				at := location(o.Locate("metadata.labels"))
				ns.LabelsAt = &at
			}
			continue
		}
		tmpls := manifest.PodTemplatesOf(o)
		if len(tmpls) == 0 {
			continue
		}
		name := o.Namespace
		if name == "" {
			name = "default"
		}
		get(name)
		workloads[name] = append(workloads[name], decodeWorkload(o, tmpls))
	}
	for _, n := range slices.Sorted(maps.Keys(byNS)) {
		ns := byNS[n]
		if ns.Defined == nil {
			undeclaredLabels(ns, opts.Options, fallback)
		}
		planNamespace(j, ns, workloads[n], target)
		markFixable(ns, opts.Fixable)
		plan.Namespaces = append(plan.Namespaces, *ns)
	}
	return plan, nil
}

// undeclaredLabels says what kiln lint judges a namespace not in the input
// with, as prepare decides it: the configuration's labels, else
// privileged for a system namespace, else the assumed level.
func undeclaredLabels(ns *NamespacePlan, opts *rules.Options, fallback api.Policy) {
	if opts != nil {
		if labels, ok := opts.PSANamespaces[ns.Name]; ok {
			ns.Current, ns.Configured = psaLabels(labels), true
			return
		}
	}
	if systemNamespaces[ns.Name] {
		ns.Assumed = map[string]string{api.EnforceLevelLabel: string(api.LevelPrivileged)}
		return
	}
	ns.Assumed = map[string]string{api.EnforceLevelLabel: string(fallback.Enforce.Level), api.EnforceVersionLabel: fallback.Enforce.Version.String()}
}

func psaLabels(labels map[string]string) map[string]string {
	out := map[string]string{}
	for _, k := range []string{api.EnforceLevelLabel, api.EnforceVersionLabel, api.AuditLevelLabel, api.AuditVersionLabel, api.WarnLevelLabel, api.WarnVersionLabel} {
		if v, ok := labels[k]; ok {
			out[k] = v
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

func decodeWorkload(o *manifest.Object, tmpls []manifest.PodTemplate) *workload {
	w := &workload{obj: o}
	content, err := o.Content()
	if err != nil {
		w.err = err.Error()
		return w
	}
	for _, t := range tmpls {
		prefix := ""
		if o.Kind == "JobSet" {
			prefix = fmt.Sprintf("replicated job %q: ", t.Name)
		}
		meta, spec, err := decodeTemplate(content, t)
		if err != nil {
			w.err = prefix + "the API server would reject this pod template: " + err.Error()
			return w
		}
		w.tmpls = append(w.tmpls, decodedTemplate{t, prefix, meta, spec})
	}
	return w
}

// passes reports whether every template of a workload passes lv.
func (w *workload) passes(j *judge, lv api.LevelVersion) bool {
	if w.err != "" {
		return lv.Level == api.LevelPrivileged
	}
	for _, dt := range w.tmpls {
		fails, err := j.evaluate(lv, dt.meta, dt.spec)
		if err != nil || len(fails) > 0 {
			return false
		}
	}
	return true
}

// failures judges every template of a workload at lv and locates each failure.
func (w *workload) failures(j *judge, lv api.LevelVersion) []Blocker {
	if w.err != "" {
		if lv.Level == api.LevelPrivileged {
			return nil
		}
		return []Blocker{{Rule: DecodeRule, Message: w.err, Pos: location(w.obj.Pos())}}
	}
	var out []Blocker
	for _, dt := range w.tmpls {
		fails, err := j.evaluate(lv, dt.meta, dt.spec)
		if err != nil {
			out = append(out, Blocker{Rule: DecodeRule, Message: dt.prefix + err.Error(), Pos: location(w.obj.Pos())})
			continue
		}
		for _, f := range fails {
			field := join(dt.t.Path, locate(f.check, dt.meta, dt.spec))
			out = append(out, Blocker{Rule: RuleID(f.check.id), Message: dt.prefix + message(f.result), Field: field, Pos: location(w.obj.Locate(field))})
		}
	}
	return out
}

// planNamespace fills in a namespace's level, steps and workloads.
func planNamespace(j *judge, ns *NamespacePlan, ws []*workload, target api.Version) {
	level, version := strictestPassed(j, ws, target)
	ns.Level, ns.LevelVersion = string(level), version.String()
	next := nextLevel(level, version, target)
	if next.Level != "" {
		ns.Next, ns.NextVersion = string(next.Level), next.Version.String()
	}
	ns.Workloads = planWorkloads(j, ws, target, next)
	ns.Steps = rolloutSteps(ns, level)
	ns.Labels = map[string]string{}
	for _, s := range ns.Steps {
		for k, v := range s.Labels {
			ns.Labels[k] = v
		}
	}
}

// strictestPassed is the strictest level every workload passes, at the
// newest version where it does: restricted, then baseline, each from the
// target down to 1.0; privileged at the target when neither passes.
func strictestPassed(j *judge, ws []*workload, target api.Version) (api.Level, api.Version) {
	passAll := func(lv api.LevelVersion) bool {
		for _, w := range ws {
			if !w.passes(j, lv) {
				return false
			}
		}
		return true
	}
	for _, l := range levels[:2] {
		for minor := target.Minor(); minor >= 0; minor-- {
			v := api.MajorMinorVersion(1, minor)
			if passAll(api.LevelVersion{Level: l, Version: v}) {
				return l, v
			}
		}
	}
	return api.LevelPrivileged, target
}

// nextLevel is the level to work towards: the same level at the target
// when only an older version passes, else one level up (none above
// restricted at the target).
func nextLevel(level api.Level, version, target api.Version) api.LevelVersion {
	switch {
	case version != target:
		return api.LevelVersion{Level: level, Version: target}
	case level == api.LevelBaseline:
		return api.LevelVersion{Level: api.LevelRestricted, Version: target}
	case level == api.LevelPrivileged:
		return api.LevelVersion{Level: api.LevelBaseline, Version: target}
	}
	return api.LevelVersion{}
}

// planWorkloads is each workload with the strictest level it passes at
// the target and the checks that block next, sorted by position.
func planWorkloads(j *judge, ws []*workload, target api.Version, next api.LevelVersion) []WorkloadPlan {
	var out []WorkloadPlan
	for _, w := range ws {
		wp := WorkloadPlan{Object: w.obj.Ref(), Pos: location(w.obj.Pos()), Level: string(api.LevelPrivileged)}
		for _, l := range levels[:2] {
			if w.passes(j, api.LevelVersion{Level: l, Version: target}) {
				wp.Level = string(l)
				break
			}
		}
		if next.Level != "" {
			wp.Blocking = w.failures(j, next)
		}
		out = append(out, wp)
	}
	sort.SliceStable(out, func(a, b int) bool {
		pa, pb := out[a].Pos, out[b].Pos
		if pa.File != pb.File {
			return pa.File < pb.File
		}
		return pa.Line < pb.Line
	})
	return out
}

// rolloutSteps are the label changes that roll the namespace's level out
// (audit, warn, then enforce; audit and warn at privileged would record
// nothing) and then audit and warn at the next level, if any.
func rolloutSteps(ns *NamespacePlan, level api.Level) []Step {
	var steps []Step
	lv, vv := ns.Level, ns.LevelVersion
	if level != api.LevelPrivileged {
		steps = []Step{
			{Mode: "audit", Labels: map[string]string{api.AuditLevelLabel: lv, api.AuditVersionLabel: vv},
				Why: "record violations in the API server's audit log; nothing is rejected"},
			{Mode: "warn", Labels: map[string]string{api.WarnLevelLabel: lv, api.WarnVersionLabel: vv},
				Why: "warn clients that create or update a violating workload; nothing is rejected"},
		}
	}
	why := "reject violating pods; check first with kubectl label --dry-run=server, which lists the running pods that would violate"
	if level == api.LevelPrivileged {
		why = "say that the namespace runs privileged pods: the privileged level allows every pod and rejects nothing"
	}
	steps = append(steps, Step{Mode: "enforce", Labels: map[string]string{api.EnforceLevelLabel: lv, api.EnforceVersionLabel: vv},
		Why: why})
	if ns.Next != "" {
		steps = append(steps, Step{Mode: "audit+warn",
			Labels: map[string]string{api.AuditLevelLabel: ns.Next, api.AuditVersionLabel: ns.NextVersion,
				api.WarnLevelLabel: ns.Next, api.WarnVersionLabel: ns.NextVersion},
			Why: "keep enforcing " + lv + " and surface what still blocks " + ns.Next + " " + ns.NextVersion})
	}
	return steps
}

// markFixable marks the blocking checks kiln fix repairs, and sets
// FixReaches when it repairs all of them.
func markFixable(ns *NamespacePlan, fixable func(string) bool) {
	if fixable == nil || ns.Next == "" {
		return
	}
	all, some := true, false
	for i := range ns.Workloads {
		for k := range ns.Workloads[i].Blocking {
			b := &ns.Workloads[i].Blocking[k]
			b.Fixable = fixable(b.Rule)
			all = all && b.Fixable
			some = true
		}
	}
	if all && some {
		ns.FixReaches = ns.Next + " " + ns.NextVersion
	}
}
