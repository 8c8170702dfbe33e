package compiler

import (
	"strings"

	"github.com/kilnhq/kiln/internal/parallel"
	"github.com/kilnhq/kiln/manifest"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Standard labels on every compiled object and pod template.
const (
	LabelName      = "app.kubernetes.io/name"
	LabelPartOf    = "app.kubernetes.io/part-of"
	LabelManagedBy = "app.kubernetes.io/managed-by"
	ManagedBy      = "kiln"
)

// Compile validates an App spec (as read by manifest.Parse) and returns the
// objects it compiles to, in the order of docs/design.md §3: the Namespace,
// PVCs, ConfigMaps, Services, Deployments, HorizontalPodAutoscalers,
// PodDisruptionBudgets, NetworkPolicies, HTTPRoutes or Ingresses, Jobs, CronJobs, JobSets, each kind by name.
// Errors are *manifest.Error values naming the spec's file, line and column
// (several are joined with errors.Join). The same spec always gives the
// same objects.
func Compile(spec *manifest.Object) ([]*manifest.Object, error) {
	objs, _, err := CompileWarn(spec)
	return objs, err
}

// CompileWarn is Compile that also returns the spec's warnings.
func CompileWarn(spec *manifest.Object) ([]*manifest.Object, []error, error) {
	a, warns, err := LoadWarn(spec)
	if err != nil {
		return nil, nil, err
	}
	e := &emitter{spec: spec, app: a}
	var nodes []*yaml.Node
	if ns := e.namespace(); ns != nil {
		nodes = append(nodes, ns)
	}
	nodes = append(nodes, e.claims()...)
	nodes = append(nodes, e.configMaps()...)
	services := sortedKeys(a.Spec.Services)
	for _, name := range services {
		if svc := e.serviceObject(name, a.Spec.Services[name]); svc != nil {
			nodes = append(nodes, svc)
		}
	}
	for _, name := range services {
		nodes = append(nodes, e.deployment(name, a.Spec.Services[name]))
	}
	for _, emit := range []func(string, *Service) *yaml.Node{e.autoscaler, e.disruptionBudget, e.networkPolicy} {
		for _, name := range services {
			if n := emit(name, a.Spec.Services[name]); n != nil {
				nodes = append(nodes, n)
			}
		}
	}
	for _, name := range services { // all HTTPRoutes or all Ingresses (target.ingress)
		nodes = append(nodes, e.routes(name, a.Spec.Services[name])...)
	}
	jobs := sortedKeys(a.Spec.Jobs)
	for _, name := range jobs {
		if j := a.Spec.Jobs[name]; j.Schedule == "" {
			nodes = append(nodes, e.job(name, j))
		}
	}
	for _, name := range jobs {
		if j := a.Spec.Jobs[name]; j.Schedule != "" {
			nodes = append(nodes, e.cronJob(name, j))
		}
	}
	for _, name := range sortedKeys(a.Spec.Training) {
		nodes = append(nodes, e.jobSet(name, a.Spec.Training[name]))
	}
	objs := make([]*manifest.Object, 0, len(nodes))
	for _, n := range nodes {
		o, err := manifest.NewObject(spec.File, spec.Doc, -1, n)
		if err != nil {
			return nil, nil, err
		}
		objs = append(objs, o)
	}
	return objs, warns, nil
}

// emitter builds the objects of one spec.
type emitter struct {
	spec *manifest.Object
	app  *App
}

// at returns the position of a spec field (or its nearest existing parent).
func (e *emitter) at(field string) pos { return posOf(e.spec.Locate(field)) }

// labels are the standard labels of an object or pod template named name.
func (e *emitter) labels(name string) map[string]string {
	return map[string]string{
		LabelName:      name,
		LabelPartOf:    e.app.Metadata.Name,
		LabelManagedBy: ManagedBy,
	}
}

// selector is the label selector of a service's pods: its key and kiln's
// managed-by label, both fixed for the life of the service. The App's name
// (part-of) and the App's labels are not in it, so renaming or relabelling
// the App changes only mutable labels and never the Deployment's immutable
// spec.selector. Two services of one key in one namespace would be one
// Deployment, so the key is unique where the selector applies.
func (e *emitter) selector(name string) map[string]string {
	return map[string]string{LabelName: name, LabelManagedBy: ManagedBy}
}

// metadata is an object's metadata: name, namespace (when namespaced), the
// standard labels merged over the spec's labels, and the spec's annotations.
func (e *emitter) metadata(p pos, name string, namespaced bool, extra map[string]string) *yaml.Node {
	labels := map[string]string{}
	for k, v := range e.app.Metadata.Labels {
		labels[k] = v
	}
	for k, v := range extra {
		labels[k] = v
	}
	for k, v := range e.labels(name) {
		labels[k] = v
	}
	md := mapping(p, field{"name", str(p, name)})
	if namespaced && e.app.Metadata.Namespace != "" {
		add(md, field{"namespace", str(p, e.app.Metadata.Namespace)})
	}
	add(md, field{"labels", stringMap(p, labels)}, field{"annotations", stringMap(p, e.annotations())})
	return md
}

// annotations are the spec's annotations that carry over to compiled
// objects: all but the ones that configure the spec document itself for
// kustomize or kubectl (a generator's function config must not turn every
// compiled object into a function).
func (e *emitter) annotations() map[string]string {
	out := map[string]string{}
	for k, v := range e.app.Metadata.Annotations {
		if strings.HasPrefix(k, "config.kubernetes.io/") || strings.HasPrefix(k, "internal.config.kubernetes.io/") ||
			strings.HasPrefix(k, "config.k8s.io/") || strings.HasPrefix(k, "kubectl.kubernetes.io/") {
			continue
		}
		out[k] = v
	}
	return out
}

// object is the top of a compiled object.
func object(p pos, apiVersion, kind string, md *yaml.Node, spec *yaml.Node) *yaml.Node {
	return mapping(p,
		field{"apiVersion", str(p, apiVersion)},
		field{"kind", str(p, kind)},
		field{"metadata", md},
		field{"spec", spec},
	)
}

// CompileAll compiles specs in parallel, one worker per CPU, and returns
// each spec's objects at its index; errs holds the errors of the specs that
// failed, in spec order.
func CompileAll(specs []*manifest.Object) (objs [][]*manifest.Object, errs []error) {
	objs, _, errs = CompileAllWarn(specs)
	return objs, errs
}

// CompileAllWarn is CompileAll that also returns the warnings of the specs
// that compiled, in spec order.
func CompileAllWarn(specs []*manifest.Object) (objs [][]*manifest.Object, warns, errs []error) {
	objs = make([][]*manifest.Object, len(specs))
	perSpec := make([]error, len(specs))
	perWarn := make([][]error, len(specs))
	parallel.Each(len(specs), func(i int) { objs[i], perWarn[i], perSpec[i] = CompileWarn(specs[i]) })
	for i, err := range perSpec {
		if err != nil {
			errs = append(errs, err)
		}
		warns = append(warns, perWarn[i]...)
	}
	return objs, warns, errs
}
