package main

import (
	"github.com/kilnhq/kiln/compiler"
	"github.com/kilnhq/kiln/manifest"
)

// compileSpecs replaces App specs among objs by the objects they compile to,
// in place, and returns every other object unchanged. Specs compile in
// parallel; each bad spec adds its positioned errors (file:line:col) and
// contributes no objects.
func compileSpecs(objs []*manifest.Object) ([]*manifest.Object, []error) {
	x := compiler.Expand(objs)
	return x.All, x.Errors
}
