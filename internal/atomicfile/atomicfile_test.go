package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	_ "github.com/kilnhq/kiln/internal/golden"
)

func TestWriteFileKeepsMode(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a.yaml")
	if err := os.WriteFile(p, []byte("old\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(p, []byte("new\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(p)
	fi, _ := os.Stat(p)
	if string(got) != "new\n" || fi.Mode().Perm() != 0o600 {
		t.Fatalf("content %q mode %v, want \"new\\n\" 0600", got, fi.Mode().Perm())
	}
	q := filepath.Join(dir, "b.yaml")
	if err := WriteFile(q, []byte("x"), 0o640); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(q); fi.Mode().Perm() != 0o640 {
		t.Fatalf("new file mode %v, want 0640", fi.Mode().Perm())
	}
}

func TestWriteFileFailureLeavesOriginal(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a.yaml")
	if err := os.WriteFile(p, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	restore := FailRenameForTest(errors.New("injected"))
	err := WriteFile(p, []byte("new\n"), 0o644)
	restore()
	if err == nil {
		t.Fatal("WriteFile succeeded with a failing rename")
	}
	got, _ := os.ReadFile(p)
	if string(got) != "old\n" {
		t.Fatalf("original changed to %q", got)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("temporary file left behind: %v", entries)
	}
}

func TestWriteFileFollowsSymlink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "real.yaml")
	link := filepath.Join(dir, "link.yaml")
	if err := os.WriteFile(target, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("real.yaml", link); err != nil {
		t.Skip("symlinks not supported:", err)
	}
	if err := WriteFile(link, []byte("new\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link was replaced: %v", err)
	}
	if got, _ := os.ReadFile(target); string(got) != "new\n" {
		t.Fatalf("target holds %q", got)
	}
}
