// Package pathkey names files the way kiln matches them across packages:
// one identity for a path however it was written.
package pathkey

import (
	"os"
	"path/filepath"
)

// Abs is p made absolute, or p cleaned when it cannot be.
func Abs(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return filepath.Clean(p)
}

// Real is Abs through no symbolic link, for matching what kustomize reads
// (it resolves links): a tree named through a linked directory matches its
// real path. Of a path that does not exist (yet), the part that does is
// resolved.
func Real(p string) string {
	a := Abs(p)
	if r, err := filepath.EvalSymlinks(a); err == nil {
		return r
	}
	if dir := filepath.Dir(a); dir != a {
		return filepath.Join(Real(dir), filepath.Base(a))
	}
	return a
}

// RepoRoot returns the repository a path is in: the nearest directory at
// or above it (above a file: from its folder) that holds .git, as an
// absolute path; "" when none does. It is kiln's one reading of "the
// repository's root".
func RepoRoot(path string) string {
	dir := Abs(path)
	if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
		dir = filepath.Dir(dir)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, ".git")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}
