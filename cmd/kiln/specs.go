package main

import (
	"github.com/kilnhq/kiln/compiler"
	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules"
)

// compileSpecs replaces App specs among objs by the objects they compile to,
// in place, and returns every other object unchanged. Each bad spec adds its
// positioned errors (file:line:col) and contributes no objects.
func compileSpecs(objs []*manifest.Object, _ *rules.Options) ([]*manifest.Object, []error) {
	out := make([]*manifest.Object, 0, len(objs))
	var errs []error
	for _, o := range objs {
		if !compiler.IsSpec(o) {
			out = append(out, o)
			continue
		}
		compiled, err := compiler.Compile(o)
		if err != nil {
			errs = append(errs, unjoin(err)...)
			continue
		}
		out = append(out, compiled...)
	}
	return out, errs
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
