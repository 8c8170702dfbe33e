package pathkey

import (
	"os"
	"path/filepath"
	"strings"
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

// TestRepoRoot: the nearest folder at or above a path (a file's folder)
// holding .git, a file or a folder (a worktree's .git is a file); none
// outside a repository.
func TestRepoRoot(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{"repo/.git", "repo/a/b", "work/.git", "work/c"} {
		if err := os.MkdirAll(filepath.Join(dir, p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Remove(filepath.Join(dir, "work/.git")); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"work/.git", "repo/a/b/x.yaml"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("gitdir: elsewhere\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct{ path, want string }{
		{"repo", "repo"},
		{"repo/a/b", "repo"},
		{"repo/a/b/x.yaml", "repo"},
		{"work/c", "work"},
	} {
		if got := RepoRoot(filepath.Join(dir, tc.path)); got != filepath.Join(dir, tc.want) {
			t.Errorf("RepoRoot(%s) = %s, want %s", tc.path, got, filepath.Join(dir, tc.want))
		}
	}
	if got := RepoRoot(dir); got != "" && !strings.HasPrefix(dir, got) {
		t.Errorf("RepoRoot(%s) = %s, want none or a folder above", dir, got)
	}
}
