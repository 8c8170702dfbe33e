package gitrev

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// repo makes a Git repository in a temp dir with two commits and returns
// its directory: the first has a.yaml, sub/b.yaml, run.sh (executable) and
// link.yaml (a symbolic link to a.yaml); the second changes a.yaml, removes
// sub/b.yaml and adds new.yaml, and leaves a.yaml edited, uncommitted.
func repo(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
			"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	write := func(name, content string, mode os.FileMode) {
		t.Helper()
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
	}
	run("init", "-q", "-b", "main")
	write("a.yaml", "first\n", 0o644)
	write("sub/b.yaml", "b\n", 0o644)
	write("run.sh", "#!/bin/sh\n", 0o755)
	if err := os.Symlink("a.yaml", filepath.Join(dir, "link.yaml")); err != nil {
		t.Fatal(err)
	}
	run("add", "-A")
	run("commit", "-q", "-m", "one")
	run("tag", "one")
	write("a.yaml", "second\n", 0o644)
	os.Remove(filepath.Join(dir, "sub/b.yaml"))
	write("new.yaml", "new\n", 0o644)
	run("add", "-A")
	run("commit", "-q", "-m", "two")
	write("a.yaml", "edited, not committed\n", 0o644)
	return dir
}

func TestMaterialize(t *testing.T) {
	dir := repo(t)
	tests := []struct {
		rev   string
		files map[string]string // "" : must not exist
	}{
		{"one", map[string]string{"a.yaml": "first\n", "sub/b.yaml": "b\n", "new.yaml": "", "run.sh": "#!/bin/sh\n"}},
		{"HEAD~1", map[string]string{"a.yaml": "first\n", "sub/b.yaml": "b\n"}},
		{"HEAD", map[string]string{"a.yaml": "second\n", "sub/b.yaml": "", "new.yaml": "new\n"}},
	}
	for _, tt := range tests {
		tree, err := Materialize(dir, tt.rev)
		if err != nil {
			t.Fatalf("Materialize(%s): %v", tt.rev, err)
		}
		for name, want := range tt.files {
			got, err := os.ReadFile(filepath.Join(tree.Dir, name))
			switch {
			case want == "" && err == nil:
				t.Errorf("%s: %s exists, want it absent", tt.rev, name)
			case want != "" && string(got) != want:
				t.Errorf("%s: %s is %q (%v), want %q", tt.rev, name, got, err, want)
			}
		}
		if tt.rev == "one" {
			if fi, err := os.Stat(filepath.Join(tree.Dir, "run.sh")); err != nil || fi.Mode().Perm()&0o100 == 0 {
				t.Errorf("run.sh lost its executable bit: %v %v", fi.Mode(), err)
			}
			if target, err := os.Readlink(filepath.Join(tree.Dir, "link.yaml")); err != nil || target != "a.yaml" {
				t.Errorf("link.yaml: %q %v, want a link to a.yaml", target, err)
			}
			if fi, err := os.Stat(filepath.Join(tree.Dir, ".git")); err != nil || !fi.IsDir() {
				t.Errorf("no .git marking the root: %v", err)
			}
		}
		p, err := tree.Path(filepath.Join(dir, "sub"))
		if err != nil || p != filepath.Join(tree.Dir, "sub") {
			t.Errorf("Path(sub) = %q, %v; want %s", p, err, filepath.Join(tree.Dir, "sub"))
		}
		if _, err := tree.Path(filepath.Dir(dir)); err == nil {
			t.Errorf("Path of a directory outside the repository: no error")
		}
		if err := tree.Remove(); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(tree.Dir); !os.IsNotExist(err) {
			t.Errorf("Remove left %s", tree.Dir)
		}
	}
	// The worktree is as it was: nothing checked out.
	if got, _ := os.ReadFile(filepath.Join(dir, "a.yaml")); string(got) != "edited, not committed\n" {
		t.Errorf("the worktree's a.yaml is %q, want the uncommitted edit kept", got)
	}
}

func TestMaterializeErrors(t *testing.T) {
	dir := repo(t)
	tests := []struct{ dir, rev, want string }{
		{dir, "no-such-branch", "no such commit"},
		{dir, "--output=/tmp/x", "no such commit"}, // not an option to git
		{t.TempDir(), "HEAD", "is not in a Git repository"},
	}
	for _, tt := range tests {
		_, err := Materialize(tt.dir, tt.rev)
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "--new-from-rev "+tt.rev) {
			t.Errorf("Materialize(%s): %v, want --new-from-rev %s: ...%s...", tt.rev, err, tt.rev, tt.want)
		}
	}
	t.Setenv("PATH", t.TempDir())
	if _, err := Materialize(dir, "HEAD"); err == nil || !strings.Contains(err.Error(), "git command is not installed") {
		t.Errorf("without git: %v", err)
	}
}
