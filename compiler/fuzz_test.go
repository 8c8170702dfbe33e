package compiler

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/kilnhq/kiln/manifest"
)

// FuzzLoadSpec feeds arbitrary documents through spec loading and
// compilation: no panics, and every failure is a positioned error.
func FuzzLoadSpec(f *testing.F) {
	more, _ := filepath.Glob("testdata/*.yaml")
	for _, p := range append(examples(f), more...) {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	for _, bs := range badSpecs {
		f.Add([]byte(bs.spec))
	}
	f.Add([]byte("apiVersion: kiln.dev/v1alpha1\nkind: App\nmetadata: {name: a}\nspec: {}\n"))
	f.Add([]byte("apiVersion: kiln.dev/v1alpha1\nkind: App\nspec: {services: {a: {containers: [{name: a, image: b, env: {a.b: 1}}]}}}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		objs, _ := manifest.Parse("fuzz.yaml", data)
		for _, o := range objs {
			if !IsSpec(o) {
				continue
			}
			out, err := Compile(o)
			if err != nil {
				for _, e := range unjoinErr(err) {
					var me *manifest.Error
					if !errors.As(e, &me) {
						t.Fatalf("error without a position: %T %v", e, e)
					}
				}
				continue
			}
			for _, c := range out {
				if c.Node().Line == 0 {
					t.Fatalf("%s has no position", c.Ref())
				}
				if _, err := manifest.Encode(c.Node()); err != nil {
					t.Fatalf("%s does not encode: %v", c.Ref(), err)
				}
			}
		}
	})
}

func unjoinErr(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}
