// Package outdir keeps a build's output directory in sync with the objects
// it compiles to: one file per object at <namespace>/<kind>-<name>.yaml,
// written atomically, files a previous build wrote and no longer produced
// removed, and a manifest (.kiln-build) of what kiln wrote so that nothing
// else in the directory is ever touched.
package outdir

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/kilnhq/kiln/internal/atomicfile"
	"github.com/kilnhq/kiln/manifest"
)

// Manifest is the file in an output directory that lists the files kiln
// wrote there, so that a later build removes only its own stale files.
const Manifest = ".kiln-build"

// Files encodes each object for its file under the output directory:
// <namespace>/<kind>-<name>.yaml; a Namespace goes with its namespace's
// objects, other cluster-scoped objects at the top.
func Files(objs []*manifest.Object) (map[string][]byte, error) {
	files := make(map[string][]byte, len(objs))
	for _, o := range objs {
		name := strings.ToLower(o.Kind) + "-" + o.Name + ".yaml"
		dir := o.Namespace
		if o.Kind == "Namespace" {
			dir = o.Name
		}
		rel := name
		if dir != "" {
			rel = dir + "/" + name
		}
		b, err := manifest.Encode(o.Node())
		if err != nil {
			return nil, fmt.Errorf("%s: cannot encode %s: %v", o.Pos(), o.Ref(), err)
		}
		files[rel] = b
	}
	return files, nil
}

// Diff is how an output directory differs from what a build would write
// (paths relative to the directory, with forward slashes).
type Diff struct {
	Stale, Missing, Extra []string
	// Leftover are temporary files of a killed build.
	Leftover []string
	// Manifest: the build manifest itself is out of date.
	Manifest bool
}

// Empty reports whether the directory is up to date.
func (d *Diff) Empty() bool {
	return len(d.Stale)+len(d.Missing)+len(d.Extra)+len(d.Leftover) == 0 && !d.Manifest
}

// Print writes a summary of the differences and one line per file.
func (d *Diff) Print(w io.Writer, dir string) {
	fmt.Fprintf(w, "kiln: %s is out of date: %d stale, %d missing, %d extra, %d leftover\n", dir, len(d.Stale), len(d.Missing), len(d.Extra), len(d.Leftover))
	for _, g := range []struct {
		what  string
		files []string
	}{{"stale", d.Stale}, {"missing", d.Missing}, {"extra", d.Extra}, {"leftover", d.Leftover}} {
		for _, f := range g.files {
			fmt.Fprintf(w, "  %-8s %s\n", g.what, filepath.Join(dir, filepath.FromSlash(f)))
		}
	}
	if d.Manifest {
		fmt.Fprintf(w, "  %-8s %s\n", "stale", filepath.Join(dir, Manifest))
	}
	fmt.Fprintln(w, "run kiln build with the same inputs and -o to update it")
}

// Compare compares the output directory with the files a build would write.
func Compare(dir string, files map[string][]byte) (*Diff, error) {
	d := &Diff{}
	for _, rel := range slices.Sorted(maps.Keys(files)) {
		have, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
		switch {
		case os.IsNotExist(err):
			d.Missing = append(d.Missing, rel)
		case err != nil:
			return nil, fmt.Errorf("%s: cannot read: %v", filepath.Join(dir, rel), err)
		case !bytes.Equal(have, files[rel]):
			d.Stale = append(d.Stale, rel)
		}
	}
	for _, rel := range previousFiles(dir) {
		if _, want := files[rel]; want {
			continue
		}
		if _, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(rel))); err == nil {
			d.Extra = append(d.Extra, rel)
		}
	}
	d.Leftover = leftoverTemps(dir, files)
	have, _ := os.ReadFile(filepath.Join(dir, Manifest))
	d.Manifest = !bytes.Equal(have, manifestContent(files))
	return d, nil
}

// tempName matches the temporary files atomicfile.WriteFile creates next to
// a target (.<name>.<random digits>.tmp).
var tempName = regexp.MustCompile(`^\.(.+)\.[0-9]+\.tmp$`)

// leftoverTemps lists, relative to dir, the temporary files a killed build
// left next to files kiln writes there (the build manifest, or a .yaml file
// this build or the previous one produces). Nothing else is ever listed.
func leftoverTemps(dir string, files map[string][]byte) []string {
	ours := map[string]bool{Manifest: true}
	subdirs := map[string]bool{"": true}
	for _, rel := range append(slices.Sorted(maps.Keys(files)), previousFiles(dir)...) {
		ours[rel] = true
		subdirs[pathDir(rel)] = true
	}
	var out []string
	for _, sub := range slices.Sorted(maps.Keys(subdirs)) {
		entries, err := os.ReadDir(filepath.Join(dir, filepath.FromSlash(sub)))
		if err != nil {
			continue
		}
		for _, en := range entries {
			m := tempName.FindStringSubmatch(en.Name())
			if m == nil || !en.Type().IsRegular() {
				continue
			}
			target := m[1]
			if sub != "" {
				target = sub + "/" + target
			}
			if ours[target] {
				rel := en.Name()
				if sub != "" {
					rel = sub + "/" + rel
				}
				out = append(out, rel)
			}
		}
	}
	return out
}

func pathDir(rel string) string {
	if i := strings.LastIndexByte(rel, '/'); i >= 0 {
		return rel[:i]
	}
	return ""
}

// Write writes every file atomically (a temporary file in the same
// directory, then a rename), skips files already up to date, removes files a
// previous build wrote that are no longer produced, and records what it wrote.
func Write(dir string, files map[string][]byte) error {
	for _, rel := range leftoverTemps(dir, files) {
		path := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
			return fmt.Errorf("%s: cannot remove a temporary file a killed build left: %v", path, err)
		}
	}
	old := previousFiles(dir)
	for _, rel := range slices.Sorted(maps.Keys(files)) {
		path := filepath.Join(dir, filepath.FromSlash(rel))
		if have, err := os.ReadFile(path); err == nil && bytes.Equal(have, files[rel]) {
			continue
		}
		if err := writeAtomic(path, files[rel]); err != nil {
			return err
		}
	}
	for _, rel := range old {
		if _, want := files[rel]; want {
			continue
		}
		path := filepath.Join(dir, filepath.FromSlash(rel))
		if fi, err := os.Lstat(path); err == nil && fi.Mode().IsRegular() {
			if err := os.Remove(path); err != nil {
				return fmt.Errorf("%s: cannot remove stale file: %v", path, err)
			}
			// Remove the namespace directory if that emptied it.
			if sub := filepath.Dir(path); sub != filepath.Clean(dir) {
				_ = os.Remove(sub) // fails, harmlessly, unless empty
			}
		}
	}
	return writeAtomic(filepath.Join(dir, Manifest), manifestContent(files))
}

// writeAtomic creates path's directory and writes data to it atomically.
func writeAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("%s: cannot create directory: %v", filepath.Dir(path), err)
	}
	return atomicfile.WriteFile(path, data, 0o644)
}

// manifestContent is the build manifest listing the files, one per line.
func manifestContent(files map[string][]byte) []byte {
	var b bytes.Buffer
	b.WriteString("# Files written by kiln build; kiln removes them when they are no longer produced.\n")
	for _, rel := range slices.Sorted(maps.Keys(files)) {
		b.WriteString(rel + "\n")
	}
	return b.Bytes()
}

// previousFiles reads the build manifest, keeping only entries that are
// plain relative paths inside the directory (never anything outside it).
func previousFiles(dir string) []string {
	data, err := os.ReadFile(filepath.Join(dir, Manifest))
	if err != nil {
		return nil
	}
	var out []string
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") || !safeRel(line) {
			continue
		}
		out = append(out, line)
	}
	return out
}

func safeRel(rel string) bool {
	if strings.HasPrefix(rel, "/") || strings.Contains(rel, "\\") || !strings.HasSuffix(rel, ".yaml") {
		return false
	}
	for _, seg := range strings.Split(rel, "/") {
		if seg == "" || seg == "." || seg == ".." || strings.HasPrefix(seg, ".") {
			return false
		}
	}
	return true
}
