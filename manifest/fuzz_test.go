package manifest

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse checks that no input makes the reader panic, that every object
// it returns can be decoded and located, and that the position index locates
// like the tree.
func FuzzParse(f *testing.F) {
	f.Add([]byte(pod))
	f.Add([]byte("apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: X}\n"))
	f.Add([]byte("a: &a [*a]\n"))
	f.Add([]byte("---\n---\n\t\n"))
	f.Add([]byte{0xff, 0xfe})
	if seeds, _ := filepath.Glob("testdata/*.yaml"); len(seeds) > 0 {
		for _, s := range seeds {
			if b, err := os.ReadFile(s); err == nil {
				f.Add(b)
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		objs, _ := Parse("fuzz.yaml", data)
		for _, o := range objs {
			_, _ = o.Content()
			_ = o.Locate("spec.template.spec.containers[0].securityContext")
			_ = PodTemplatesOf(o)
			if ix := newPosIndex(o.Node()); ix != nil && len(ix) < 2000 {
				for _, p := range allPaths(o.Node(), "") {
					if got, want := ix.locate(o.File, o.Pos(), SplitPath(p)), o.Locate(p); got != want {
						t.Fatalf("Locate(%q) = %v from the index, %v from the tree", p, got, want)
					}
				}
			}
		}
	})
}
