package policytest

import (
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/kilnhq/kiln/manifest"
)

// IsTestFile reports whether a file name is a test file kiln finds in a
// directory: kiln-test.yaml, *.kiln-test.yaml or kyverno-test.yaml.
func IsTestFile(name string) bool {
	base := filepath.Base(name)
	return base == KilnFileName || strings.HasSuffix(base, KilnFileSuffix) || base == KyvernoFileName
}

// Find returns the test files under the paths, sorted: a directory is
// walked for test files (manifest.WalkTree: hidden files and directories
// skipped), a file is a test file whatever its name. A path that does not
// exist is an error.
func Find(paths []string) ([]string, []error) {
	if len(paths) == 0 {
		paths = []string{"."}
	}
	var out []string
	var errs []error
	seen := map[string]bool{}
	add := func(p string) {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	for _, root := range paths {
		info, err := os.Stat(root)
		if err != nil {
			errs = append(errs, &FileError{Pos: manifest.Position{File: root}, Msg: "cannot read: " + manifest.PathErr(err)})
			continue
		}
		if !info.IsDir() {
			add(root)
			continue
		}
		err = manifest.WalkTree(root, func(p string, d fs.DirEntry) error {
			if !d.IsDir() && IsTestFile(p) {
				add(p)
			}
			return nil
		}, func(p string, err error) {
			errs = append(errs, &FileError{Pos: manifest.Position{File: p}, Msg: "cannot read: " + manifest.PathErr(err)})
		})
		if err != nil {
			errs = append(errs, err)
		}
	}
	sort.Strings(out)
	return out, errs
}

// Load reads one test file: Kyverno's format for kyverno-test.yaml (or a
// file whose kind is Test), kiln's otherwise.
func Load(file string) (*Suite, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, &FileError{Pos: manifest.Position{File: file}, Msg: "cannot read: " + manifest.PathErr(err)}
	}
	if filepath.Base(file) == KyvernoFileName || kyvernoKind(data) {
		return readKyverno(file, data)
	}
	return readKiln(file, data)
}
