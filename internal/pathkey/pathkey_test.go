package pathkey

import (
	"os"
	"path/filepath"
	"testing"
)

func TestAbsAndReal(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real")
	if err := os.Mkdir(real, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(real, link); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
	realDir, err := filepath.EvalSymlinks(real) // the temp dir itself may be behind a link
	if err != nil {
		t.Fatal(err)
	}
	wd, _ := os.Getwd()
	for _, tc := range []struct{ in, abs, real string }{
		{link + "/x.yaml", link + "/x.yaml", realDir + "/x.yaml"}, // x.yaml does not exist: its directory is resolved
		{link, link, realDir},
		{link + "/../real", real, realDir},
		{"a/b", filepath.Join(wd, "a/b"), filepath.Join(wd, "a/b")},
	} {
		if got := Abs(tc.in); got != tc.abs {
			t.Errorf("Abs(%q) = %q, want %q", tc.in, got, tc.abs)
		}
		if got := Real(tc.in); got != tc.real {
			t.Errorf("Real(%q) = %q, want %q", tc.in, got, tc.real)
		}
	}
}
