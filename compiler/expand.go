package compiler

import (
	"fmt"
	"sort"

	"github.com/kilnhq/kiln/manifest"
)

// Expansion is a set of inputs with its App specs compiled.
type Expansion struct {
	// All is every input object, with the compiled objects in place of
	// their specs (what a lint judges).
	All []*manifest.Object
	// Compiled is the compiled objects alone, in spec order.
	Compiled []*manifest.Object
	// Warnings are the compiler's warnings, Errors the positioned errors of
	// the specs that do not compile (those contribute no objects).
	Warnings, Errors []error
}

// Expand compiles the specs among objs, in parallel; objects that are not
// specs pass through unchanged.
func Expand(objs []*manifest.Object) Expansion {
	var specs []*manifest.Object
	for _, o := range objs {
		if IsSpec(o) {
			specs = append(specs, o)
		}
	}
	if len(specs) == 0 {
		return Expansion{All: objs}
	}
	results, warns, cerrs := CompileAllWarn(specs)
	x := Expansion{All: make([]*manifest.Object, 0, len(objs)), Warnings: warns}
	for _, err := range cerrs {
		x.Errors = append(x.Errors, Unjoin(err)...)
	}
	next := 0
	for _, o := range objs {
		if !IsSpec(o) {
			x.All = append(x.All, o)
			continue
		}
		x.All = append(x.All, results[next]...)
		x.Compiled = append(x.Compiled, results[next]...)
		next++
	}
	return x
}

// Unjoin splits an errors.Join error (CompileAll's per-spec errors) into
// its parts, one positioned error each.
func Unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, Unjoin(e)...)
		}
		return out
	}
	return []error{err}
}

// kindRank orders compiled objects across specs as docs/design.md §3 does within one.
var kindRank = map[string]int{"Namespace": 0, "PersistentVolumeClaim": 1, "ConfigMap": 2, "Service": 3, "Deployment": 4,
	"HorizontalPodAutoscaler": 5, "PodDisruptionBudget": 6, "NetworkPolicy": 7, "HTTPRoute": 8, "Ingress": 9, "Job": 10, "CronJob": 11, "JobSet": 12}

// OutputOrder sorts compiled objects for output, in place: by kind across
// specs, then in spec order. Two specs compiling to the same object is an
// error at the second one.
func OutputOrder(compiled []*manifest.Object) []error {
	sort.SliceStable(compiled, func(i, j int) bool { return kindRank[compiled[i].Kind] < kindRank[compiled[j].Kind] })
	var errs []error
	seen := map[manifest.Ref]*manifest.Object{}
	for _, o := range compiled {
		if prev, dup := seen[o.Ref()]; dup {
			errs = append(errs, &manifest.Error{Pos: o.Pos(), Msg: fmt.Sprintf("%s is also produced by %s; two specs compile to the same object: rename one", o.Ref(), prev.Pos())})
			continue
		}
		seen[o.Ref()] = o
	}
	return errs
}
