package main

import (
	"github.com/kilnhq/kiln/compiler"
	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules"
)

// compileSpecs replaces App specs among objs by the objects they compile to,
// in place, and returns every other object unchanged. Specs compile in
// parallel; each bad spec adds its positioned errors (file:line:col) and
// contributes no objects.
func compileSpecs(objs []*manifest.Object, _ *rules.Options) ([]*manifest.Object, []error) {
	out, _, errs := expandSpecs(objs)
	return out, errs
}

// expandSpecs compiles the specs among objs. It returns every object with the
// compiled ones in place of their specs, the compiled ones alone, and the
// errors of bad specs.
func expandSpecs(objs []*manifest.Object) (all, compiled []*manifest.Object, errs []error) {
	var specs []*manifest.Object
	for _, o := range objs {
		if compiler.IsSpec(o) {
			specs = append(specs, o)
		}
	}
	if len(specs) == 0 {
		return objs, nil, nil
	}
	results, cerrs := compiler.CompileAll(specs)
	for _, err := range cerrs {
		errs = append(errs, unjoin(err)...)
	}
	all = make([]*manifest.Object, 0, len(objs))
	next := 0
	for _, o := range objs {
		if !compiler.IsSpec(o) {
			all = append(all, o)
			continue
		}
		all = append(all, results[next]...)
		compiled = append(compiled, results[next]...)
		next++
	}
	return all, compiled, errs
}

// unjoin splits an errors.Join error into its parts.
func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, unjoin(e)...)
		}
		return out
	}
	return []error{err}
}
