// Package workload holds the checks newcomers expect of a workload
// (workload/…), as kube-linter and Polaris make them: images pinned to a
// tag or digest, containers that ask for resources, readiness probes on
// the containers a Service sends traffic to, and pull policies that match
// the tag. They are warnings, on by default: a team turns them off in
// .kiln.yaml (rules: {"workload/*": off}), or some of them.
//
// workload/resources and workload/readiness relate objects (a
// LimitRange's defaults, a Service's selector), within one unit, so the
// package is in Go: judges keep small summaries and report from Finish.
package workload

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules"
	"github.com/kilnhq/kiln/rules/internal/podutil"
)

// Rule IDs.
const (
	ImageTag   = "workload/image-tag"
	Resources  = "workload/resources"
	Readiness  = "workload/readiness"
	PullPolicy = "workload/pull-policy"
)

// Checker reports the workload rules.
var Checker = &rules.Checker{Name: "workload", Rules: ruleList, Prepare: prepare, Relates: true}

// longRunning are the kinds whose pods run until replaced, which a
// Service sends traffic to (Pods, Jobs and CronJobs run to completion or
// are not managed: only their images are judged).
var longRunning = map[string]bool{"Deployment": true, "StatefulSet": true, "DaemonSet": true, "ReplicaSet": true, "ReplicationController": true}

// workloadGroups are the API groups of the kinds above and of Pods, Jobs
// and CronJobs: a custom resource of the same kind name is not judged.
var workloadGroups = map[string]bool{"": true, "apps": true, "batch": true, "extensions": true}

// unresourced is a container without requests or limits, reported
// unless a LimitRange of its namespace sets them.
type unresourced struct {
	mark      *rules.Mark
	container string
	unit      string
	ns        string
	missing   []string
}

// served is a container of a long-running workload without a readiness
// probe, with the ports it declares.
type served struct {
	mark      *rules.Mark
	unit, ns  string
	labels    map[string]string
	container string
	ports     []port
}

type port struct {
	name   string
	number int64
}

// target is a Service port's targetPort (a number or a name) and the
// Service port's name.
type target struct {
	port, name string
}

// service is what a Service selects and where it sends traffic.
type service struct {
	unit, ns string
	name     string
	selector map[string]string
	targets  []target
}

type state struct {
	mu          sync.Mutex
	unresourced []unresourced
	served      []served
	services    []service
	limitRanges map[[2]string]bool // unit, namespace
}

func prepare(p *rules.Pass) (rules.Judge, error) {
	s := &state{limitRanges: map[[2]string]bool{}}
	p.Finish(func() { s.report(p) })
	return func(o *manifest.Object) { s.judge(p, o) }, nil
}

func (s *state) judge(p *rules.Pass, o *manifest.Object) {
	switch {
	case o.Kind == "Service" && o.Group() == "":
		s.service(o)
		return
	case o.Kind == "LimitRange" && o.Group() == "":
		s.limitRange(o)
		return
	}
	if !workloadGroups[o.Group()] {
		return
	}
	tmpls := manifest.PodTemplatesOf(o)
	if len(tmpls) == 0 {
		return
	}
	content, err := o.Content()
	if err != nil {
		return // the schema checker reports what cannot be decoded
	}
	for _, t := range tmpls {
		var labels map[string]string
		if m, ok := podutil.At(content, t.MetadataPath()+".labels").(map[string]any); ok {
			labels = strs(m)
		}
		for _, c := range podutil.Containers(content, t.SpecPath()) {
			s.container(p, o, c, labels)
		}
	}
}

// container judges one container of a pod template of o.
func (s *state) container(p *rules.Pass, o *manifest.Object, c podutil.Container, labels map[string]string) {
	tag, mutable := imageTag(c.Image)
	if c.Image != "" && mutable && p.Enabled(ImageTag) {
		msg := fmt.Sprintf("container %q: image %q names no tag, so it runs whatever the registry's latest is when a node pulls it; pin a version tag or a digest", c.Name, c.Image)
		if tag == "latest" {
			msg = fmt.Sprintf("container %q: image %q is tagged latest, which moves: nodes run different builds; pin a version tag or a digest", c.Name, c.Image)
		}
		p.Report(rules.Diagnostic{Rule: ImageTag, Object: o, Field: c.Field("image"), Message: msg})
	}
	if policy := podutil.Str(c.M, "imagePullPolicy"); c.Image != "" && mutable && policy == "IfNotPresent" && p.Enabled(PullPolicy) {
		p.Report(rules.Diagnostic{Rule: PullPolicy, Object: o, Field: c.Field("imagePullPolicy"),
			Message: fmt.Sprintf("container %q: imagePullPolicy IfNotPresent on image %q, whose tag moves: a node keeps the build it pulled first; pin a tag or a digest, or pull Always", c.Name, c.Image)})
	}
	// An init container that runs to completion runs before the others,
	// within what the pod reserves for them (the scheduler reserves the
	// larger of the two): it is judged with them, as Polaris does. A
	// native sidecar runs beside them and is judged as one of them.
	if p.Enabled(Resources) && (!c.Init || c.RestartAlways()) {
		if missing := missingResources(c.M); len(missing) > 0 {
			s.mu.Lock()
			s.unresourced = append(s.unresourced, unresourced{mark: p.Mark(o, c.Path), container: c.Name, unit: manifest.UnitOf(o), ns: o.Namespace, missing: missing})
			s.mu.Unlock()
		}
	}
	if longRunning[o.Kind] && p.Enabled(Readiness) && podutil.Map(c.M, "readinessProbe") == nil && (!c.Init || c.RestartAlways()) {
		sv := served{mark: p.Mark(o, c.Path), unit: manifest.UnitOf(o), ns: o.Namespace, labels: labels, container: c.Name}
		for _, it := range podutil.List(c.M, "ports") {
			m, _ := it.(map[string]any)
			n, _ := podutil.Int(m, "containerPort")
			sv.ports = append(sv.ports, port{name: podutil.Str(m, "name"), number: n})
		}
		if len(sv.ports) > 0 {
			s.mu.Lock()
			s.served = append(s.served, sv)
			s.mu.Unlock()
		}
	}
}

// imageTag is an image reference's tag ("" for none), and whether the
// image can change under the same reference: no digest, and no tag or
// latest. What is not an image reference yet is never mutable: a build
// tool's (ko://, which ko resolves to a digest) or a placeholder
// (<YOUR-IMAGE>, ${IMAGE}).
func imageTag(image string) (tag string, mutable bool) {
	if strings.Contains(image, "@") || strings.Contains(image, "://") || strings.ContainsAny(image, "<>{}$ ") {
		return "", false
	}
	name := image[strings.LastIndexByte(image, '/')+1:]
	if i := strings.LastIndexByte(name, ':'); i >= 0 {
		tag = name[i+1:]
	}
	return tag, tag == "" || tag == "latest"
}

// missingResources lists what a container does not ask for: CPU and
// memory requests (a limit sets the request it lacks) and a memory limit.
func missingResources(c map[string]any) []string {
	res := podutil.Map(c, "resources")
	req, lim := podutil.Map(res, "requests"), podutil.Map(res, "limits")
	var out []string
	for _, r := range []string{"cpu", "memory"} {
		if req[r] == nil && lim[r] == nil {
			out = append(out, "requests."+r)
		}
	}
	if lim["memory"] == nil {
		out = append(out, "limits.memory")
	}
	return out
}

// tolerateUnready is publishNotReadyAddresses as an annotation, before
// Kubernetes 1.11 (still written by older manifests).
const tolerateUnready = "service.alpha.kubernetes.io/tolerate-unready-endpoints"

func (s *state) service(o *manifest.Object) {
	content, err := o.Content()
	if err != nil {
		return
	}
	spec := podutil.Map(content, "spec")
	sel := podutil.Map(spec, "selector")
	// A Service without a selector has endpoints someone else manages;
	// one that publishes pods not ready sends traffic whatever the probe.
	if len(sel) == 0 || spec["publishNotReadyAddresses"] == true || podutil.Str(spec, "type") == "ExternalName" ||
		o.Annotations[tolerateUnready] == "true" {
		return
	}
	sv := service{unit: manifest.UnitOf(o), ns: o.Namespace, name: o.Name, selector: strs(sel)}
	for _, it := range podutil.List(spec, "ports") {
		m, _ := it.(map[string]any)
		name := podutil.Str(m, "name")
		switch t := m["targetPort"].(type) {
		case string:
			sv.targets = append(sv.targets, target{t, name})
		case nil:
			if n, ok := podutil.Int(m, "port"); ok {
				sv.targets = append(sv.targets, target{strconv.FormatInt(n, 10), name})
			}
		default:
			if n, ok := podutil.AsInt(t); ok {
				sv.targets = append(sv.targets, target{strconv.FormatInt(n, 10), name})
			}
		}
	}
	s.mu.Lock()
	s.services = append(s.services, sv)
	s.mu.Unlock()
}

// limitRange notes a namespace whose LimitRange gives containers default
// requests or limits.
func (s *state) limitRange(o *manifest.Object) {
	content, err := o.Content()
	if err != nil {
		return
	}
	for _, it := range podutil.List(podutil.Map(content, "spec"), "limits") {
		m, _ := it.(map[string]any)
		if podutil.Str(m, "type") == "Container" && (podutil.Map(m, "default") != nil || podutil.Map(m, "defaultRequest") != nil) {
			s.mu.Lock()
			s.limitRanges[[2]string{manifest.UnitOf(o), o.Namespace}] = true
			s.mu.Unlock()
		}
	}
}

func (s *state) report(p *rules.Pass) {
	for _, u := range s.unresourced {
		if s.limitRanges[[2]string{u.unit, u.ns}] {
			continue
		}
		p.Report(rules.Diagnostic{Rule: Resources, At: u.mark,
			Message: fmt.Sprintf("container %q sets no %s: the scheduler places it as if it needed nothing, and it may take a node's memory; set resources.requests and resources.limits.memory (or give the namespace a LimitRange)",
				u.container, strings.Join(u.missing, ", "))})
	}
	for _, c := range s.served {
		var by []string
		for _, sv := range s.services {
			if sv.unit == c.unit && sv.ns == c.ns && selects(sv.selector, c.labels) && targets(sv.targets, c.ports) {
				by = append(by, sv.name)
			}
		}
		if len(by) == 0 {
			continue
		}
		slices.Sort(by)
		by = slices.Compact(by) // one name in several files of the unit
		p.Report(rules.Diagnostic{Rule: Readiness, At: c.mark,
			Message: fmt.Sprintf("container %q serves Service %s but has no readinessProbe: the Service sends it traffic as soon as it starts, before it can answer, and keeps sending while it cannot", c.container, strings.Join(by, ", "))})
	}
}

// selects reports whether a selector matches the labels.
func selects(sel, labels map[string]string) bool {
	for k, v := range sel {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// targets reports whether a Service's target ports name a container port
// (by number, or by name) that carries traffic: a port either side names
// for metrics, profiling or probes is scraped or polled, not served (a
// scraper's endpoints include pods not ready), so a container reached
// only there is a worker.
func targets(ts []target, ports []port) bool {
	for _, t := range ts {
		for _, p := range ports {
			if (t.port == p.name || t.port == strconv.FormatInt(p.number, 10)) && !observability(t.name) && !observability(p.name) {
				return true
			}
		}
	}
	return false
}

// observabilityWords are the words of a port name that say what is
// scraped or polled on it: Prometheus metrics (and exporters), pprof
// profiling, health and probe endpoints.
var observabilityWords = map[string]bool{"metrics": true, "exporter": true, "profiling": true, "pprof": true, "probes": true, "health": true, "healthz": true}

// observability reports whether a port name (such as http-metrics) says
// the port is for observability.
func observability(name string) bool {
	for _, w := range strings.FieldsFunc(name, func(r rune) bool { return r == '-' || r == '_' || r == '.' }) {
		if observabilityWords[w] {
			return true
		}
	}
	return false
}

func strs(m map[string]any) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		if s, ok := v.(string); ok {
			out[k] = s
		}
	}
	return out
}
