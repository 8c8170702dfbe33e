package compiler

import (
	"fmt"
	"path/filepath"

	"github.com/kilnhq/kiln/manifest"
)

// DropConfigFiles removes from the inputs the files that specs read into
// ConfigMaps (an Envoy or Fluent Bit config next to the spec is data for a
// ConfigMap, not a manifest to compile or lint).
func DropConfigFiles(set *manifest.Set) {
	used := map[string]bool{}
	for _, o := range set.Objects() {
		if IsSpec(o) {
			for _, f := range ConfigFiles(o) {
				if abs, err := filepath.Abs(f); err == nil {
					used[abs] = true
				}
			}
		}
	}
	if len(used) == 0 {
		return
	}
	kept := set.Sources[:0]
	for _, src := range set.Sources {
		if abs, err := filepath.Abs(src.Path); err == nil && used[abs] {
			continue
		}
		kept = append(kept, src)
	}
	set.Sources = kept
}

// MisnamedSpecs refuses objects of kind App that are not in kiln's group: in a
// build, a spec whose header is wrong must stop the build rather than drop
// the app's files from the output directory.
func MisnamedSpecs(objs []*manifest.Object) []error {
	var errs []error
	for _, o := range objs {
		if MaybeSpec(o) && !IsSpec(o) {
			errs = append(errs, &manifest.Error{Pos: o.Locate("apiVersion"), Msg: fmt.Sprintf("kind App with apiVersion %q is not a kiln App spec (apiVersion %s); kiln build refuses it so that a typo never removes the app's output: fix the apiVersion, or exclude the file in .kiln.yaml if it is another API's App", o.APIVersion, APIVersion)})
		}
	}
	return errs
}
