// Package discover decides what each input file is (a plain manifest, part
// of a kustomization, part of a Helm chart, or not a Kubernetes file at all)
// and renders kustomizations and charts with kustomize's and Helm's own
// libraries, offline, into objects whose positions point at their sources.
package discover

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/kilnhq/kiln/manifest"
	"sigs.k8s.io/yaml"
)

// Options tune discovery and rendering.
type Options struct {
	// KubeVersion is passed to Helm as the cluster's version (capabilities).
	KubeVersion manifest.KubeVersion
	// Chart returns the Helm settings of the chart in dir (values, release).
	Chart func(dir string) ChartSettings
	// Excluded reports whether a path is excluded by the config.
	Excluded func(path string) bool
}

// ChartSettings are how one chart is rendered.
type ChartSettings struct {
	// ReleaseName defaults to "release-name", Namespace to "default" (as helm template).
	ReleaseName string
	Namespace   string
	// ValueFiles are read in order over the chart's values.yaml; Set are
	// --set expressions applied last.
	ValueFiles []string
	Set        []string
}

// Unit is a rendered kustomization or chart.
type Unit struct {
	// Kind is "kustomization" or "chart".
	Kind string
	// Dir is the kustomization's or chart's directory as the user named it.
	Dir string
	// Source holds the rendered objects (positions in their source files)
	// and the problems rendering found.
	Source *manifest.Source
}

// Result is what discovery found under the inputs.
type Result struct {
	// Files are the plain manifest files to read, in input order.
	Files []string
	// Units are the rendered kustomizations and charts, in input order.
	Units []*Unit
	// Skipped are the paths not linted (a kustomization with a remote base,
	// a chart consumed by a kustomization), with why.
	Skipped []manifest.Skipped
	// Warnings are problems that skip something but are not input errors.
	Warnings []error
	// Errs are problems with the inputs themselves (a path that does not exist).
	Errs []error
}

// Count returns how many units of a kind were rendered without error.
func (r *Result) Count(kind string) int {
	n := 0
	for _, u := range r.Units {
		if u.Kind == kind && len(u.Source.Errs) == 0 {
			n++
		}
	}
	return n
}

// kustomizationNames are the file names that make a directory a kustomization root.
var kustomizationNames = []string{"kustomization.yaml", "kustomization.yml", "Kustomization"}

// kustomizationFile returns the kustomization file in dir, or "".
func kustomizationFile(dir string) string {
	for _, n := range kustomizationNames {
		if fi, err := os.Stat(filepath.Join(dir, n)); err == nil && !fi.IsDir() {
			return filepath.Join(dir, n)
		}
	}
	return ""
}

// isChartDir reports whether dir holds a Chart.yaml.
func isChartDir(dir string) bool {
	fi, err := os.Stat(filepath.Join(dir, "Chart.yaml"))
	return err == nil && !fi.IsDir()
}

// candidates is what a walk of the inputs found, before rendering.
type candidates struct {
	files  []string // manifest files, in input order
	kusts  []string // kustomization directories
	charts []string // chart directories
	seen   map[string]bool
}

func (c *candidates) add(list *[]string, p string) {
	k := absOr(p)
	if c.seen[k] {
		return
	}
	c.seen[k] = true
	*list = append(*list, p)
}

// Discover walks paths (files, directories; "-" is stdin and kept as a
// plain file), builds every topmost kustomization and renders every chart
// found, and returns the plain files left to read.
func Discover(paths []string, opts Options) *Result {
	res := &Result{}
	c := &candidates{seen: map[string]bool{}}
	for _, p := range paths {
		if p == manifest.Stdin {
			c.add(&c.files, p)
			continue
		}
		info, err := os.Stat(p)
		if err != nil {
			res.Errs = append(res.Errs, &manifest.Error{Pos: manifest.Position{File: p}, Msg: "cannot read: " + pathErr(err)})
			continue
		}
		if !info.IsDir() {
			c.addFile(p)
			continue
		}
		before := len(c.files) + len(c.kusts) + len(c.charts)
		c.walk(p, res)
		if len(c.files)+len(c.kusts)+len(c.charts) == before {
			res.Errs = append(res.Errs, &manifest.Error{Pos: manifest.Position{File: p}, Msg: "directory holds no *.yaml, *.yml or *.json files, kustomization or Helm chart; name a directory with manifests"})
		}
	}
	excluded := func(p string) bool { return opts.Excluded != nil && p != manifest.Stdin && opts.Excluded(p) }

	consumed := map[string]string{}  // absolute path → the kustomization that read it
	readByOther := map[string]bool{} // kustomization files another build read
	builds, notes := buildKustomizations(filterOut(c.kusts, excluded), opts)
	sort.Strings(notes) // builds run in parallel: their notes come in any order
	for _, n := range notes {
		res.Warnings = append(res.Warnings, fmt.Errorf("kustomize: %s", n))
	}
	for _, b := range builds {
		if b.plugin != "" {
			res.Skipped = append(res.Skipped, manifest.Skipped{Pos: manifest.Position{File: b.file}, Reason: "kustomization that needs a plugin or KRM function, which kiln never runs"})
			res.Warnings = append(res.Warnings, &manifest.Error{Pos: manifest.Position{File: b.file, Line: 1, Column: 1}, Msg: "warning: this kustomization needs a plugin or KRM function (" + b.plugin + "); kiln runs no code from the repository, so it is skipped: lint its output instead (kustomize build --enable-alpha-plugins DIR | kiln lint -)"})
			for _, f := range dirFiles(b.dir) {
				consumed[f] = b.dir
			}
			continue
		}
		if b.remote != "" {
			res.Skipped = append(res.Skipped, manifest.Skipped{Pos: manifest.Position{File: b.file}, Reason: "kustomization with a remote base, which kiln never fetches"})
			res.Warnings = append(res.Warnings, &manifest.Error{Pos: b.remotePos, Msg: "warning: remote base " + b.remote + " is not fetched (kiln works offline); this kustomization is skipped: vendor the base or lint its rendered output"})
			for _, f := range dirFiles(b.dir) {
				consumed[f] = b.dir
			}
			continue
		}
		own := absOr(b.file)
		for f := range b.read {
			if _, ok := consumed[f]; !ok {
				consumed[f] = b.dir
			}
			if f != own && isKustomizationName(filepath.Base(f)) {
				readByOther[f] = true
			}
		}
	}
	// Only topmost kustomizations are kept: one whose kustomization file
	// another build read is that build's base, component or overlay input.
	for _, b := range builds {
		if b.remote != "" || b.plugin != "" || readByOther[absOr(b.file)] {
			continue
		}
		if b.component {
			res.Skipped = append(res.Skipped, manifest.Skipped{Pos: manifest.Position{File: b.file}, Reason: "kustomize Component that no kustomization in the input includes (components are built only where included)"})
			continue
		}
		res.Units = append(res.Units, &Unit{Kind: "kustomization", Dir: b.dir, Source: b.source})
	}
	deps := fileDependencies(c.charts)
	for _, dir := range filterOut(c.charts, excluded) {
		if consumedUnder(consumed, dir) != "" {
			res.Skipped = append(res.Skipped, manifest.Skipped{Pos: manifest.Position{File: filepath.Join(dir, "Chart.yaml")}, Reason: "chart whose files a kustomization consumes (linted through it)"})
			continue
		}
		if deps[absOr(dir)] {
			continue // a file:// dependency: rendered inside the chart that depends on it
		}
		res.Units = append(res.Units, &Unit{Kind: "chart", Dir: dir, Source: renderChart(dir, opts)})
	}
	kustDirs := map[string]bool{}
	for _, d := range c.kusts {
		kustDirs[absOr(d)] = true
	}
	for _, f := range c.files {
		if f != manifest.Stdin {
			if _, ok := consumed[absOr(f)]; ok {
				continue
			}
			if excluded(f) {
				continue
			}
			if kustDirs[filepath.Dir(absOr(f))] {
				// kustomize builds that directory and never reads this file
				// (a patch whose entry is commented out, a scaffold): nothing
				// applies it, and alone it is often a partial object.
				res.Skipped = append(res.Skipped, manifest.Skipped{Pos: manifest.Position{File: f}, Reason: unusedInKustomization})
				continue
			}
		}
		res.Files = append(res.Files, f)
	}
	sort.SliceStable(res.Units, func(i, j int) bool { return res.Units[i].Dir < res.Units[j].Dir })
	return res
}

// unusedInKustomization is why a file beside a kustomization that no
// build read is skipped.
const unusedInKustomization = "in a kustomization's directory but not read by any kustomize build of the input (kustomize never applies it)"

// addFile takes a file the user named: a kustomization or Chart.yaml stands
// for its directory; a file inside a chart for its chart; others are plain
// (a file a kustomization above it consumes is linted through it).
func (c *candidates) addFile(p string) {
	base := filepath.Base(p)
	for _, n := range kustomizationNames {
		if base == n {
			c.add(&c.kusts, filepath.Dir(p))
			return
		}
	}
	if base == "Chart.yaml" {
		c.add(&c.charts, filepath.Dir(p))
		return
	}
	if chart := enclosing(p, isChartDir); chart != "" {
		c.add(&c.charts, chart)
		return
	}
	if k := enclosing(p, func(d string) bool { return kustomizationFile(d) != "" }); k != "" {
		c.add(&c.kusts, k)
	}
	c.add(&c.files, p)
}

// enclosing returns the nearest directory above file (up to the
// repository's root, a directory holding .git, or the filesystem's) for
// which is holds, as a path relative like file's.
func enclosing(file string, is func(dir string) bool) string {
	dir := filepath.Dir(file)
	for i := 0; i < 64; i++ {
		if is(dir) {
			return dir
		}
		if _, err := os.Stat(filepath.Join(dir, ".git")); err == nil {
			return ""
		}
		parent := filepath.Join(dir, "..")
		if absOr(parent) == absOr(dir) {
			return ""
		}
		dir = parent
	}
	return ""
}

// walk collects manifest files, kustomization roots and charts under root.
// Hidden files and directories are tooling, not manifests; a chart's
// directory is its own (its templates are not manifests).
func (c *candidates) walk(root string, res *Result) {
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			res.Errs = append(res.Errs, &manifest.Error{Pos: manifest.Position{File: path}, Msg: "cannot read: " + pathErr(err)})
			return nil
		}
		if path != root && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			if isChartDir(path) {
				c.add(&c.charts, path)
				return filepath.SkipDir
			}
			if kustomizationFile(path) != "" {
				c.add(&c.kusts, path)
			}
			return nil
		}
		if manifest.IsManifestFile(d.Name()) && !isKustomizationName(d.Name()) {
			c.add(&c.files, path)
		}
		return nil
	})
	if err != nil {
		res.Errs = append(res.Errs, &manifest.Error{Pos: manifest.Position{File: root}, Msg: err.Error()})
	}
}

func isKustomizationName(n string) bool {
	for _, k := range kustomizationNames {
		if n == k {
			return true
		}
	}
	return false
}

func filterOut(ps []string, drop func(string) bool) []string {
	var out []string
	for _, p := range ps {
		if !drop(p) {
			out = append(out, p)
		}
	}
	return out
}

// fileDependencies returns the directories that charts name as file://
// dependencies (absolute paths).
func fileDependencies(charts []string) map[string]bool {
	out := map[string]bool{}
	for _, dir := range charts {
		data, err := os.ReadFile(filepath.Join(dir, "Chart.yaml"))
		if err != nil {
			continue
		}
		var meta struct {
			Dependencies []struct{ Repository string } `json:"dependencies"`
		}
		if yaml.Unmarshal(data, &meta) != nil {
			continue
		}
		for _, d := range meta.Dependencies {
			if rest, ok := strings.CutPrefix(d.Repository, "file://"); ok {
				out[absOr(filepath.Join(dir, rest))] = true
			}
		}
	}
	return out
}

// consumedUnder returns the kustomization that read a file under dir, or "".
func consumedUnder(consumed map[string]string, dir string) string {
	prefix := absOr(dir) + string(filepath.Separator)
	best := ""
	for f, by := range consumed {
		if strings.HasPrefix(f, prefix) && (best == "" || by < best) {
			best = by
		}
	}
	return best
}

// dirFiles lists the files directly in dir, as absolute paths.
func dirFiles(dir string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if !e.IsDir() {
			out = append(out, filepath.Join(absOr(dir), e.Name()))
		}
	}
	return out
}

func absOr(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return filepath.Clean(p)
}

func pathErr(err error) string {
	if pe, ok := err.(*fs.PathError); ok {
		return pe.Err.Error()
	}
	return err.Error()
}
