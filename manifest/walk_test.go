package manifest

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWalkTree(t *testing.T) {
	root := t.TempDir()
	for _, f := range []string{"a.yaml", ".kiln.yaml", ".github/ci.yaml", "sub/b.yml", "sub/.hidden/c.yaml", "sub/skip/d.yaml"} {
		p := filepath.Join(root, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	hiddenRoot := filepath.Join(root, ".hiddenroot")
	if err := os.Mkdir(hiddenRoot, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(hiddenRoot, "e.yaml"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		root string
		want []string
	}{
		{"hidden files and directories are neither visited nor entered; SkipDir skips", root, []string{".", "a.yaml", "sub", "sub/b.yml", "sub/skip"}},
		{"a hidden root is walked", hiddenRoot, []string{".", "e.yaml"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			err := WalkTree(tt.root, func(path string, d fs.DirEntry) error {
				rel, _ := filepath.Rel(tt.root, path)
				got = append(got, filepath.ToSlash(rel))
				if d.IsDir() && d.Name() == "skip" {
					return filepath.SkipDir
				}
				return nil
			}, func(path string, err error) { t.Errorf("unreadable %s: %v", path, err) })
			if err != nil || strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Errorf("visited %v (%v), want %v", got, err, tt.want)
			}
		})
	}
	var unreadable []string
	WalkTree(filepath.Join(root, "none"), func(string, fs.DirEntry) error { return nil }, func(path string, err error) {
		unreadable = append(unreadable, filepath.Base(path)+": "+PathErr(err))
	})
	if strings.Join(unreadable, ",") != "none: no such file or directory" {
		t.Errorf("unreadable = %v", unreadable)
	}
}

func TestPathErr(t *testing.T) {
	_, err := os.Open("/no/such/file")
	if got := PathErr(err); got != "no such file or directory" {
		t.Errorf("PathErr(%v) = %q", err, got)
	}
	if got := PathErr(errors.New("plain")); got != "plain" {
		t.Errorf("PathErr(plain) = %q", got)
	}
}
