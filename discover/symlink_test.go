package discover

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kilnhq/kiln/manifest"
)

// TestSymlinkedPaths: a tree named through a symbolic link (a linked
// directory itself, or a path whose parent is one) is found and rendered
// as through its real path: the same files, units, objects and skips.
// kustomize resolves links, so kiln's bookkeeping of what a build read
// must too.
func TestSymlinkedPaths(t *testing.T) {
	real, err := filepath.Abs("testdata/trees")
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	if err := os.Symlink(real, filepath.Join(tmp, "trees")); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
	if err := os.Symlink(filepath.Dir(real), filepath.Join(tmp, "testdata")); err != nil {
		t.Fatal(err)
	}
	summary := func(path string) string {
		res := Discover([]string{path}, Options{KubeVersion: manifest.LatestKube})
		rel := func(p string) string {
			for _, prefix := range []string{real, filepath.Join(tmp, "trees"), filepath.Join(tmp, "testdata", "trees")} {
				if r, err := filepath.Rel(prefix, p); err == nil && !strings.HasPrefix(r, "..") {
					return r
				}
			}
			return p
		}
		var b strings.Builder
		for _, e := range res.Errs {
			b.WriteString("error " + e.Error() + "\n")
		}
		for _, f := range res.Files {
			b.WriteString("file " + rel(f) + "\n")
		}
		for _, u := range res.Units {
			b.WriteString(u.Kind + " " + rel(u.Dir) + "\n")
			for _, o := range u.Source.Objects {
				b.WriteString("  " + o.Ref().String() + "\n")
			}
		}
		for _, s := range res.Skipped {
			b.WriteString("skipped " + rel(s.Pos.File) + ": " + s.Reason + "\n")
		}
		return b.String()
	}
	want := summary(real)
	if !strings.Contains(want, "kustomization ") || !strings.Contains(want, "skipped ") {
		t.Fatalf("the real tree gives no kustomization or skip to compare:\n%s", want)
	}
	for _, path := range []string{filepath.Join(tmp, "trees"), filepath.Join(tmp, "testdata", "trees")} {
		if got := summary(path); got != want {
			t.Errorf("through %s:\n%s\nwant, as through the real path:\n%s", path, got, want)
		}
	}
}
