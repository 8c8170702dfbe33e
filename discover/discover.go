// Package discover decides what each input file is (a plain manifest, part
// of a kustomization, part of a Helm chart, or not a Kubernetes file at all)
// and renders kustomizations and charts with kustomize's and Helm's own
// libraries, offline, into objects whose positions point at their sources.
package discover

import (
	"fmt"
	"github.com/kilnhq/kiln/internal/pathkey"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/kilnhq/kiln/discover/charts"
	"github.com/kilnhq/kiln/discover/rendercache"
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
	// Edited are files a kustomize build reads with this content instead
	// of what is on disk, by absolute path: kiln fix --dry-run judges its
	// edits of resource files before it writes them (or without).
	Edited map[string][]byte
	// Plain renders nothing: every manifest file found is a plain file,
	// kustomization files aside, and a chart's directory is not entered
	// (kiln build and argocd generate read App specs and the files beside
	// them).
	Plain bool
	// Charts is the chart cache HelmReleases render from (nil: the
	// default one, charts.DefaultDir; read only, never the network).
	Charts *charts.Cache
	// GitSource returns the folder a Flux GitRepository stands for, as
	// seen from a file of the input (a HelmRelease's chart path is read
	// there); nil: what a Controller says (ControllerOutput.GitSource).
	GitSource func(namespace, name, file string) (dir string, ok bool)
	// Controllers render what GitOps controllers deploy from the input
	// (discover/flux), after the kustomizations are built.
	Controllers []Controller
	// Cache, when set, is the content cache rendered units are remembered
	// in across runs (discover/rendercache): a unit whose inputs are as
	// they were is restored, not rendered. Not with Edited.
	Cache manifest.Cache
	// Rendered, when set, is told of each unit rendered rather than
	// restored from Cache (its kind and name), as it is.
	Rendered func(kind, name string)

	// renders is the render cache over Cache of one discovery.
	renders *rendercache.Store
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
	// Setting names where this chart's settings are written
	// ("helm.charts.charts/app" in .kiln.yaml), for the error of a chart
	// that cannot render without values; "" names the chart's directory.
	Setting string
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
	// Skipped are the paths not linted (a kustomization with a remote base
	// and the files it names, a kustomize patch nothing applies, a chart
	// consumed by a kustomization, a partial object a build outputs), with why.
	Skipped []manifest.Skipped
	// Warnings are problems that skip something but are not input errors,
	// and what kustomize and Helm logged, in kiln's words.
	Warnings []error
	// Errs are problems with the inputs themselves (a path that does not exist).
	Errs []error
	// Charts are the chart sources the HelmReleases name (what `kiln
	// fetch` downloads), and MissingCharts those not in the chart cache.
	Charts, MissingCharts []charts.Source
	// gitSource is a controller's rule for Git sources (Options.GitSource).
	gitSource func(namespace, name, file string) (string, bool)
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
	k := pathkey.Real(p)
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
			res.Errs = append(res.Errs, &manifest.Error{Pos: manifest.Position{File: p}, Msg: "cannot read: " + manifest.PathErr(err)})
			continue
		}
		if !info.IsDir() {
			c.addFile(p)
			continue
		}
		before := len(c.files) + len(c.kusts) + len(c.charts)
		c.walk(p, res)
		switch {
		case opts.Plain && len(c.files)+len(c.kusts)+len(c.charts) == before:
			res.Errs = append(res.Errs, &manifest.Error{Pos: manifest.Position{File: p}, Msg: "directory holds no *.yaml, *.yml or *.json files; name a directory with manifests"})
		case len(c.files)+len(c.kusts)+len(c.charts) == before:
			res.Errs = append(res.Errs, &manifest.Error{Pos: manifest.Position{File: p}, Msg: "directory holds no *.yaml, *.yml or *.json files, kustomization or Helm chart; name a directory with manifests"})
		}
	}
	excluded := func(p string) bool { return opts.Excluded != nil && p != manifest.Stdin && opts.Excluded(p) }
	if opts.Plain {
		res.Files = filterOut(c.files, excluded)
		return res
	}

	if opts.Cache != nil && len(opts.Edited) == 0 {
		opts.renders = rendercache.New(opts.Cache)
	}
	shared := &buildShared{sources: newSources(opts.Edited), edited: opts.Edited, store: opts.renders, rendered: opts.Rendered}
	builds, notes := buildKustomizations(filterOut(c.kusts, excluded), shared)
	kusts := settleKustomizations(builds, notes)
	files, skipped := c.plainFiles(kusts, excluded)
	marks := scanMarks(files)
	var charts []renderedChart
	deps := fileDependencies(c.charts)
	for _, dir := range filterOut(c.charts, excluded) {
		if consumedUnder(kusts.consumed, dir) != "" {
			res.Skipped = append(res.Skipped, manifest.Skipped{Pos: manifest.Position{File: filepath.Join(dir, "Chart.yaml")}, Reason: "chart whose files a kustomization consumes (linted through it)"})
			continue
		}
		if deps[pathkey.Real(dir)] {
			continue // a file:// dependency: rendered inside the chart that depends on it
		}
		src, warnings := renderChartCached(dir, opts)
		charts = append(charts, renderedChart{unit: &Unit{Kind: "chart", Dir: dir, Source: src}, warnings: warnings})
	}
	consumed := runControllers(opts, dirArgs(paths), files, marks, kusts, &charts, shared, res)
	files = filterOut(files, func(f string) bool { return f != manifest.Stdin && consumed[pathkey.Real(f)] })
	res.Units = append(res.Units, kusts.units...)
	res.Skipped = append(res.Skipped, kusts.skipped...)
	res.Warnings = append(res.Warnings, kusts.warnings...)
	for _, ch := range charts {
		res.Units = append(res.Units, ch.unit)
		res.Warnings = append(res.Warnings, ch.warnings...)
	}
	res.Files = append(res.Files, files...)
	res.Skipped = append(res.Skipped, skipped...)
	res.renderHelmReleases(marks, opts)
	sort.SliceStable(res.Units, func(i, j int) bool { return res.Units[i].Dir < res.Units[j].Dir })
	return res
}

// renderedChart is a chart of the input rendered with its own values.
type renderedChart struct {
	unit     *Unit
	warnings []error
}

// plainFiles returns the files to lint on their own, in input order, and
// those skipped: a file a kustomize build read is linted through it; a
// file a kustomization names that kiln does not build, or that is named as
// a patch, is skipped; so is a file shaped like a patch in a
// kustomization's tree (at any depth below its directory) that no build
// read: nothing applies it, and alone it is a partial object. Every other
// file, complete manifests beside a kustomization included, is linted as
// `kubectl apply -f` applies it.
func (c *candidates) plainFiles(kusts *kustOutcome, excluded func(string) bool) ([]string, []manifest.Skipped) {
	var files []string
	var skipped []manifest.Skipped
	above := map[string]string{} // directory → the nearest kustomization directory at or above it
	var metaOnly []metaFile
	for _, f := range c.files {
		if f == manifest.Stdin {
			files = append(files, f)
			continue
		}
		abs := pathkey.Real(f)
		if _, ok := kusts.consumed[abs]; ok || excluded(f) {
			continue
		}
		if s, ok := kusts.named[abs]; ok {
			s.Pos = manifest.Position{File: f}
			skipped = append(skipped, s)
			continue
		}
		dir := filepath.Dir(f)
		k, ok := above[dir]
		if !ok {
			k = enclosing(f, func(d string) bool { return kustomizationFile(d) != "" })
			above[dir] = k
		}
		if k != "" {
			if why := patchShape(f); why != "" {
				skipped = append(skipped, manifest.Skipped{Pos: manifest.Position{File: f}, Reason: ReasonPatch,
					Detail: why + ", under " + kustomizationFile(k)})
				continue
			}
			if keys := metadataOnly(f); keys != nil {
				metaOnly = append(metaOnly, metaFile{f, k, keys})
			}
		}
		files = append(files, f)
	}
	if len(metaOnly) == 0 {
		return files, skipped
	}
	patches := metadataPatches(metaOnly, files, kusts.units)
	for _, m := range metaOnly {
		if why, ok := patches[m.file]; ok {
			skipped = append(skipped, manifest.Skipped{Pos: manifest.Position{File: m.file}, Reason: ReasonPatch,
				Detail: why + ", under " + kustomizationFile(m.kust)})
		}
	}
	files = filterOut(files, func(f string) bool { _, ok := patches[f]; return ok })
	return files, skipped
}

// metaFile is a file under a kustomization that holds only apiVersion,
// kind and metadata (metadataOnly's keys).
type metaFile struct {
	file, kust string
	keys       []string
}

// metadataPatches returns, of the metadata-only files, those whose every
// object another file defines (a kustomize build's output or a plain
// file), with why: such a file is a patch (kueue's
// apiservice_cainjection_patch.yaml annotates the APIService that
// components/visibility defines), not a second, partial object.
func metadataPatches(meta []metaFile, files []string, units []*Unit) map[string]string {
	defined := map[string][]string{} // objectKey → the files that define it
	add := func(o *manifest.Object) {
		key := objectKey(o.Group(), o.Kind, o.Name)
		defined[key] = append(defined[key], o.File)
	}
	for _, u := range units {
		if u.Source != nil {
			for _, o := range u.Source.Objects {
				add(o)
			}
		}
	}
	isMeta := map[string]bool{}
	for _, m := range meta {
		isMeta[m.file] = true
	}
	for _, f := range files {
		if f == manifest.Stdin || isMeta[f] {
			continue
		}
		objs, _ := manifest.Parse(f, mustRead(f))
		for _, o := range objs {
			add(o)
		}
	}
	out := map[string]string{}
	for _, m := range meta {
		var by []string
		for _, key := range m.keys {
			other := ""
			for _, file := range defined[key] {
				if pathkey.Real(file) != pathkey.Real(m.file) {
					other = file
					break
				}
			}
			if other == "" {
				by = nil
				break
			}
			_, rest, _ := strings.Cut(key, "/")
			kind, name, _ := strings.Cut(rest, "/")
			by = append(by, fmt.Sprintf("%s %q, which %s defines", kind, name, other))
		}
		if by != nil {
			out[m.file] = "holds only apiVersion, kind and metadata of " + strings.Join(by, "; ")
		}
	}
	return out
}

// mustRead returns a file's bytes, nil when it cannot be read (the reader
// reports that when it reads the file).
func mustRead(path string) []byte {
	data, _ := os.ReadFile(path)
	return data
}

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
	repo := pathkey.RepoRoot(dir)
	for i := 0; i < 64; i++ {
		if is(dir) {
			return dir
		}
		if repo != "" && pathkey.Abs(dir) == repo {
			return ""
		}
		parent := filepath.Join(dir, "..")
		if pathkey.Real(parent) == pathkey.Real(dir) {
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
	err := manifest.WalkTree(root, func(path string, d fs.DirEntry) error {
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
	}, func(path string, err error) {
		res.Errs = append(res.Errs, &manifest.Error{Pos: manifest.Position{File: path}, Msg: "cannot read: " + manifest.PathErr(err)})
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

// dirArgs returns the paths that name directories.
func dirArgs(paths []string) []string {
	var out []string
	for _, p := range paths {
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			out = append(out, p)
		}
	}
	return out
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
				out[pathkey.Real(filepath.Join(dir, rest))] = true
			}
		}
	}
	return out
}

// consumedUnder returns the kustomization that read a file under dir, or "".
func consumedUnder(consumed map[string]string, dir string) string {
	prefix := pathkey.Real(dir) + string(filepath.Separator)
	best := ""
	for f, by := range consumed {
		if strings.HasPrefix(f, prefix) && (best == "" || by < best) {
			best = by
		}
	}
	return best
}
