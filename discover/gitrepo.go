package discover

import (
	"bufio"
	"bytes"
	"github.com/kilnhq/kiln/internal/pathkey"
	"os"
	"path/filepath"
	"strings"
)

// GitRoot returns the root of the Git repository path is in
// (pathkey.RepoRoot, kiln's one reading of it), relative to the current
// directory where it can be, so that positions under it stay relative;
// "" when path is in none.
func GitRoot(path string) string {
	dir := pathkey.RepoRoot(path)
	if dir == "" {
		return ""
	}
	if wd, err := os.Getwd(); err == nil {
		if rel, err := filepath.Rel(wd, dir); err == nil {
			return rel
		}
	}
	return dir
}

// GitRemotes returns the URLs of the remotes of the Git repository whose
// root is root (a worktree's: its repository's), as its config writes
// them, in order; none when it has no config kiln can read. Only the
// config file is read: kiln runs no git command for it.
func GitRemotes(root string) []string {
	dir := filepath.Join(root, ".git")
	if st, err := os.Stat(dir); err == nil && !st.IsDir() {
		// A worktree or submodule: ".git" is a file naming the git dir.
		data, err := os.ReadFile(dir)
		if err != nil {
			return nil
		}
		line, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir:")
		if !ok {
			return nil
		}
		dir = strings.TrimSpace(line)
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(root, dir)
		}
		if common, err := os.ReadFile(filepath.Join(dir, "commondir")); err == nil {
			c := strings.TrimSpace(string(common))
			if !filepath.IsAbs(c) {
				c = filepath.Join(dir, c)
			}
			dir = c
		}
	}
	data, err := os.ReadFile(filepath.Join(dir, "config"))
	if err != nil {
		return nil
	}
	var urls []string
	inRemote := false
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "[") {
			inRemote = strings.HasPrefix(line, "[remote ")
			continue
		}
		if !inRemote {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if ok && strings.EqualFold(strings.TrimSpace(k), "url") {
			urls = append(urls, strings.Trim(strings.TrimSpace(v), `"`))
		}
	}
	return urls
}
