// Package gitrev writes the files of a Git revision to a private temp
// directory (kiln lint --new-from-rev judges the tree there): it reads the
// tree and the blobs with the git command (git ls-tree, git cat-file
// --batch), never checks anything out, and leaves the user's worktree,
// index and stash alone.
package gitrev

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// Tree is the files of one revision, written under Dir.
type Tree struct {
	// Dir is the repository's root as of the revision (a temp directory).
	Dir string
	// Rev is the revision as the user named it; Commit what it resolved to.
	Rev, Commit string
	// top is the repository's root in the worktree.
	top string
}

// Materialize writes the tree of rev, of the Git repository holding dir,
// to a new temp directory; Remove deletes it.
func Materialize(dir, rev string) (*Tree, error) { return MaterializeFor("--new-from-rev", dir, rev) }

// MaterializeFor is Materialize for the command option named flag, which
// its errors name ("--base" for kiln diff).
func MaterializeFor(flag, dir, rev string) (*Tree, error) {
	if _, err := exec.LookPath("git"); err != nil {
		return nil, fmt.Errorf("%s %s: the git command is not installed (kiln reads the revision with it): install git, or run without %s", flag, rev, flag)
	}
	top, err := git(dir, nil, "rev-parse", "--show-toplevel")
	if err != nil {
		return nil, fmt.Errorf("%s %s: %s is not in a Git repository (%v)", flag, rev, orDot(dir), err)
	}
	top = strings.TrimSpace(top)
	commit, err := git(top, nil, "rev-parse", "--verify", "--quiet", "--end-of-options", rev+"^{commit}")
	if err != nil {
		return nil, fmt.Errorf("%s %s: no such commit in %s: name a branch, tag or commit the repository has (in CI, fetch it: actions/checkout with fetch-depth: 0)", flag, rev, top)
	}
	t := &Tree{Rev: rev, Commit: strings.TrimSpace(commit), top: top}
	t.Dir, err = os.MkdirTemp("", "kiln-rev-")
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", flag, rev, err)
	}
	if err := t.write(); err != nil {
		t.Remove()
		return nil, fmt.Errorf("%s %s: reading the tree: %w", flag, rev, err)
	}
	return t, nil
}

func orDot(dir string) string {
	if dir == "" {
		return "."
	}
	return dir
}

// Remove deletes the temp directory.
func (t *Tree) Remove() error {
	if t == nil || t.Dir == "" {
		return nil
	}
	return os.RemoveAll(t.Dir)
}

// Path is where the path p of the worktree (relative to the current
// directory, or absolute) is in the tree; an error for a path outside the
// repository.
func (t *Tree) Path(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	rel, err := filepath.Rel(realPath(t.top), realPath(abs))
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return "", fmt.Errorf("--new-from-rev: %s is outside the Git repository %s", p, t.top)
	}
	return filepath.Join(t.Dir, rel), nil
}

// realPath resolves the links of the longest part of p that exists (p
// itself may not exist: a file deleted since the revision).
func realPath(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	dir, base := filepath.Split(p)
	dir = filepath.Clean(dir)
	if dir == p {
		return p
	}
	return filepath.Join(realPath(dir), base)
}

// entry is a line of git ls-tree.
type entry struct {
	mode, kind, object, path string
}

// write writes every blob of the tree (files, executables, symbolic links;
// submodules are left out) and an empty .git, which marks the root for
// the search of .kiln.yaml.
func (t *Tree) write() error {
	out, err := git(t.top, nil, "ls-tree", "-r", "-z", "--full-tree", t.Commit)
	if err != nil {
		return err
	}
	var blobs []entry
	for _, rec := range strings.Split(out, "\x00") {
		meta, path, ok := strings.Cut(rec, "\t")
		if !ok {
			continue
		}
		f := strings.Fields(meta)
		if len(f) != 3 || f[1] != "blob" {
			continue // a submodule (commit) has no files here
		}
		if !filepath.IsLocal(path) {
			return fmt.Errorf("the tree names %q, outside itself", path)
		}
		blobs = append(blobs, entry{mode: f[0], kind: f[1], object: f[2], path: path})
	}
	if err := os.Mkdir(filepath.Join(t.Dir, ".git"), 0o700); err != nil {
		return err
	}
	return catBlobs(t.top, blobs, func(e entry, data []byte) error {
		dst := filepath.Join(t.Dir, filepath.FromSlash(e.path))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		switch e.mode {
		case "120000":
			return os.Symlink(string(data), dst)
		case "100755":
			return os.WriteFile(dst, data, 0o755)
		}
		return os.WriteFile(dst, data, 0o644)
	})
}

// catBlobs reads the blobs with one git cat-file --batch, in order.
func catBlobs(dir string, blobs []entry, fn func(entry, []byte) error) error {
	if len(blobs) == 0 {
		return nil
	}
	cmd := exec.Command("git", "cat-file", "--batch")
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	go func() {
		w := bufio.NewWriter(stdin)
		for _, b := range blobs {
			w.WriteString(b.object + "\n")
		}
		w.Flush()
		stdin.Close()
	}()
	r := bufio.NewReader(stdout)
	var readErr error
	for _, b := range blobs {
		head, err := r.ReadString('\n')
		if err != nil {
			readErr = fmt.Errorf("git cat-file: %w", err)
			break
		}
		f := strings.Fields(head)
		if len(f) != 3 || f[1] != "blob" {
			readErr = fmt.Errorf("git cat-file: %s: %s", b.path, strings.TrimSpace(head))
			break
		}
		size, err := strconv.Atoi(f[2])
		if err != nil {
			readErr = fmt.Errorf("git cat-file: %s: bad size %q", b.path, f[2])
			break
		}
		data := make([]byte, size+1) // the content and its newline
		if _, err := io.ReadFull(r, data); err != nil {
			readErr = fmt.Errorf("git cat-file: %s: %w", b.path, err)
			break
		}
		if err := fn(b, data[:size]); err != nil {
			readErr = err
			break
		}
	}
	if readErr != nil {
		cmd.Process.Kill()
		cmd.Wait()
		return readErr
	}
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("git cat-file: %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	return nil
}

// git runs a git command in dir and returns its output.
func git(dir string, stdin io.Reader, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Stdin = stdin
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				msg = ee.Error()
			} else {
				msg = err.Error()
			}
		}
		return "", errors.New(msg)
	}
	return stdout.String(), nil
}

// DefaultBase is the commit a change in the repository holding dir is
// compared with when no revision is named: the merge base of HEAD and the
// default branch (origin/HEAD, else the first of origin/main,
// origin/master, main and master that exists).
func DefaultBase(dir string) (string, error) {
	if _, err := exec.LookPath("git"); err != nil {
		return "", errors.New("the git command is not installed (kiln reads the revision with it)")
	}
	top, err := git(dir, nil, "rev-parse", "--show-toplevel")
	if err != nil {
		return "", fmt.Errorf("%s is not in a Git repository (%v)", orDot(dir), err)
	}
	top = strings.TrimSpace(top)
	var branches []string
	if ref, err := git(top, nil, "symbolic-ref", "-q", "refs/remotes/origin/HEAD"); err == nil {
		branches = append(branches, strings.TrimSpace(ref))
	}
	branches = append(branches, "refs/remotes/origin/main", "refs/remotes/origin/master", "refs/heads/main", "refs/heads/master")
	for _, b := range branches {
		if _, err := git(top, nil, "rev-parse", "--verify", "--quiet", b); err != nil {
			continue
		}
		base, err := git(top, nil, "merge-base", "HEAD", b)
		if err != nil {
			return "", fmt.Errorf("no merge base of HEAD and %s: %v", b, err)
		}
		return strings.TrimSpace(base), nil
	}
	return "", errors.New("no default branch (origin/HEAD, main or master) to compare with: name a revision with --base")
}
