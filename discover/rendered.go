package discover

import (
	"crypto/sha256"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/kilnhq/kiln/discover/charts"
	"github.com/kilnhq/kiln/internal/pathkey"

	"github.com/kilnhq/kiln/discover/rendercache"
	"github.com/kilnhq/kiln/manifest"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// What rendering a unit gave is remembered across runs in the content
// cache (Options.Cache, through discover/rendercache): a kustomize build
// by its directory, its request and every file it read or probed; a
// HelmRelease by its object and every object, chart and folder it named;
// a chart of the input by its settings and its files. Only a render that
// succeeded, read nothing the record cannot check again, and said nothing
// the record cannot say again is remembered.

// buildKey is the render cache's key of a kustomize build; ok is false
// when it is not remembered (no cache, or a Controller's transform with
// no key).
func buildKey(b *kustBuild, st *rendercache.Store) (key [32]byte, ok bool) {
	if st == nil {
		return key, false
	}
	k := rendercache.NewKey("kustomize").Add(b.dir, b.file)
	if r := b.req; r != nil {
		if r.Transform != nil && r.TransformKey == "" {
			return key, false
		}
		k.Add("request", r.KustomizationFile, r.ReportAt, strconv.FormatBool(r.LoadAnywhere), r.TransformKey, r.Unit)
		k.AddBytes(r.Kustomization)
	}
	return k.Sum(), true
}

// buildFlags are what a record of a build says of it in Extra[0].
const buildComponent = "component"

// buildRecord returns the record of a build that may be remembered, nil
// for one that may not (failed, skipped, or reading the unkeyed).
func buildRecord(b *kustBuild, st *rendercache.Store) *rendercache.Record {
	if b.deps == nil || b.failed || b.remote != "" || b.plugin != "" || b.source == nil || len(b.source.Errs) > 0 {
		return nil
	}
	if b.req != nil && b.req.Remember != nil && !b.req.Remember() {
		return nil
	}
	deps, ok := b.deps.List()
	if !ok {
		return nil
	}
	rec := &rendercache.Record{Deps: deps, Extra: []string{""}}
	if b.component {
		rec.Extra[0] = buildComponent
	}
	for f := range b.read {
		rec.Extra = append(rec.Extra, st.Name(f))
	}
	for _, o := range b.source.Objects {
		ob := rendercache.ObjectOf(o)
		for _, p := range b.parts[o] {
			ob.Parts = append(ob.Parts, rendercache.Part{At: p.at, Doc: p.doc, Slot: p.slot, File: st.Name(p.path), Sum: p.sum})
		}
		rec.Objects = append(rec.Objects, ob)
	}
	return rec
}

// restoreBuild sets b to what a record of its build holds; false (b
// untouched) without a usable record.
func restoreBuild(b *kustBuild, rec *rendercache.Record, st *rendercache.Store, src *sources) bool {
	if rec == nil || len(rec.Extra) == 0 {
		return false
	}
	objs := make([]*manifest.Object, 0, len(rec.Objects))
	for _, ob := range rec.Objects {
		parts, ok := schemaParts(ob, st, src)
		if !ok {
			return false
		}
		o, err := ob.Make(parts...)
		if err != nil {
			return false
		}
		objs = append(objs, o)
	}
	b.source = &manifest.Source{Path: b.file, Objects: objs}
	b.component = rec.Extra[0] == buildComponent
	for _, name := range rec.Extra[1:] {
		b.read[st.Path(name)] = true
	}
	return true
}

// schemaParts puts back the schemas a record of a build left out (a large
// CRD's, written once in their file: the record names them), shared with
// every build of the discovery as a build's own are, and returns them as
// the object's detachable parts; ok is false when the record does not
// match its tree or the file.
func schemaParts(ob rendercache.Object, st *rendercache.Store, src *sources) ([]manifest.Detachable, bool) {
	if len(ob.Parts) == 0 {
		return nil, true
	}
	slots := schemaSlots(ob.Node)
	parts := make([]manifest.Detachable, 0, len(ob.Parts))
	for _, p := range ob.Parts {
		if p.At < 0 || p.At >= len(slots) {
			return nil, false
		}
		sc := src.schemaAt(st.Path(p.File), p.Doc, p.Slot)
		if sc == nil || sc.sum() != p.Sum {
			return nil, false
		}
		slots[p.At][1] = sc.tree
		parts = append(parts, sc.part(slots[p.At]))
	}
	return parts, true
}

// withoutSchemas calls fn with the objects' detachable schemas left out of
// their trees (an empty mapping at the same place): a record names them
// instead of holding them.
func withoutSchemas(b *kustBuild, fn func()) {
	type swap struct {
		slot  []*yaml.Node
		value *yaml.Node
	}
	var swaps []swap
	for o, refs := range b.parts {
		slots := schemaSlots(o.Node())
		for _, r := range refs {
			if r.at < len(slots) {
				v := slots[r.at][1]
				swaps = append(swaps, swap{slots[r.at], v})
				slots[r.at][1] = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: v.Line, Column: v.Column}
			}
		}
	}
	fn()
	for _, s := range swaps {
		s.slot[1] = s.value
	}
}

// chartTrees records the folders a chart in dir is loaded from: its own
// and those of its file:// dependencies, in turn.
func chartTrees(deps *rendercache.Deps, st *rendercache.Store, dir string, seen map[string]bool) {
	real := pathkey.Real(dir)
	if seen[real] {
		return
	}
	seen[real] = true
	deps.Tree(st, dir)
	if data, err := os.ReadFile(filepath.Join(dir, "requirements.yaml")); err == nil && strings.Contains(string(data), "file://") {
		deps.Unkeyed() // an apiVersion v1 chart's file:// dependencies: not followed here
	}
	for dep := range fileDependencies([]string{dir}) {
		chartTrees(deps, st, dep, seen)
	}
}

// renderChartCached is renderChart through the render cache: a chart of
// the input, keyed by its folder and settings, its files its
// dependencies.
func renderChartCached(dir string, opts Options) (*manifest.Source, []error) {
	st := opts.renders
	var set ChartSettings
	if opts.Chart != nil {
		set = opts.Chart(dir)
	}
	settings, _ := json.Marshal(set)
	key := rendercache.NewKey("chart").Add(dir, string(settings), kubeKey(opts.KubeVersion)).Sum()
	rec, slot := st.Lookup(key, nil)
	if rec != nil {
		if objs, ok := rec.MakeObjects(); ok {
			return &manifest.Source{Path: filepath.Join(dir, "Chart.yaml"), Objects: objs}, rec.Warnings
		}
	}
	if opts.Rendered != nil {
		opts.Rendered("chart", dir)
	}
	src, warnings := renderChart(dir, opts)
	if st == nil || len(src.Errs) > 0 {
		return src, warnings
	}
	deps := &rendercache.Deps{}
	chartTrees(deps, st, dir, map[string]bool{})
	for _, f := range set.ValueFiles {
		deps.File(st, f, nil)
	}
	if list, ok := deps.List(); ok {
		rec := &rendercache.Record{Deps: list, Warnings: warnings}
		for _, o := range src.Objects {
			rec.Objects = append(rec.Objects, rendercache.ObjectOf(o))
		}
		st.Put(slot, rec)
	}
	return src, warnings
}

// kubeKey is the Kubernetes version a render is for, in a key.
func kubeKey(v manifest.KubeVersion) string {
	return strconv.Itoa(v.Major) + "." + strconv.Itoa(v.Minor)
}

// objectSum is what a HelmRelease's record says of an object of the input
// it read (nil: none was found): where it is and its tree, positions
// included.
func objectSum(o *manifest.Object) ([32]byte, bool) {
	if o == nil {
		return sha256.Sum256([]byte("kiln-render: no object")), true
	}
	n := o.Node()
	if n == nil {
		return [32]byte{}, false
	}
	tree := manifest.TreeSum(n)
	return rendercache.NewKey("object").Add(o.File, strconv.Itoa(o.Doc), strconv.Itoa(o.Item), o.Unit, o.Cluster, string(tree[:])).Sum(), true
}

// Names of what a HelmRelease's record says it read beside files: an
// object of the input looked up, a chart of the chart cache, the folder
// of a Git source.
const (
	inputFind  = "find"
	inputChart = "chart"
	inputGit   = "git"
)

func inputName(parts ...string) string { return strings.Join(parts, "\x00") }

// recordFind is the fluxContext's hook while a release renders: each
// object looked up is a dependency of the release.
func (r *releaseRenderer) recordFind(kind, ns, name string, o *manifest.Object) {
	if r.deps == nil {
		return
	}
	sum, ok := objectSum(o)
	if !ok {
		r.deps.Unkeyed()
		return
	}
	r.deps.Input(inputName(inputFind, kind, ns, name), sum)
}

// recordChart notes the chart cache's answer for src while a release
// renders.
func (r *releaseRenderer) recordChart(src charts.Source, digest string) {
	if r.deps == nil {
		return
	}
	data, err := json.Marshal(src)
	if err != nil {
		r.deps.Unkeyed()
		return
	}
	r.deps.Input(inputName(inputChart, string(data)), sha256.Sum256([]byte(digest)))
}

// recordGit notes the folder a Git source stands for while a release
// renders.
func (r *releaseRenderer) recordGit(ns, name, file, dir string, ok bool) {
	if r.deps != nil {
		r.deps.Input(inputName(inputGit, ns, name, file), gitSum(dir, ok))
	}
}

func gitSum(dir string, ok bool) [32]byte {
	return sha256.Sum256([]byte(strconv.FormatBool(ok) + "\x00" + dir))
}

// inputNow answers what a HelmRelease's record read, as the run has it.
func (r *releaseRenderer) inputNow(name string) ([32]byte, bool) {
	parts := strings.Split(name, "\x00")
	switch {
	case parts[0] == inputFind && len(parts) == 4:
		return objectSum(r.ctx.find(parts[1], parts[2], parts[3]))
	case parts[0] == inputChart && len(parts) == 2:
		var src charts.Source
		if json.Unmarshal([]byte(parts[1]), &src) != nil || r.cache == nil {
			return [32]byte{}, false
		}
		c, err := r.cache.Lookup(src)
		if err != nil {
			return [32]byte{}, false
		}
		return sha256.Sum256([]byte(c.Digest)), true
	case parts[0] == inputGit && len(parts) == 4 && r.opts.GitSource != nil:
		dir, ok := r.opts.GitSource(parts[1], parts[2], parts[3])
		return gitSum(dir, ok), true
	}
	return [32]byte{}, false
}

// releaseKey is the render cache's key of a HelmRelease: the object, its
// place, and the Kubernetes version; ok is false when it has no tree.
func releaseKey(o *manifest.Object, opts Options) ([32]byte, bool) {
	sum, ok := objectSum(o)
	if !ok {
		return sum, false
	}
	return rendercache.NewKey("helmrelease").Add(string(sum[:]), kubeKey(opts.KubeVersion)).Sum(), true
}

// renderCached is render through the render cache.
func (r *releaseRenderer) renderCached(o *manifest.Object) *Unit {
	st := r.opts.renders
	key, ok := releaseKey(o, r.opts)
	var slot rendercache.Slot
	if ok && st != nil {
		var rec *rendercache.Record
		if rec, slot = st.Lookup(key, r.inputNow); rec != nil {
			if u := r.restore(o, rec); u != nil {
				return u
			}
		}
	}
	if r.opts.Rendered != nil {
		r.opts.Rendered("helmrelease", releaseUnitDir(o))
	}
	if !ok || st == nil {
		return r.render(o)
	}
	r.deps = &rendercache.Deps{}
	defer func() { r.deps = nil }()
	warned, noted, missing := len(r.out.Warnings), len(r.out.Charts), len(r.out.Missing)
	u := r.render(o)
	list, keyed := r.deps.List()
	if !keyed || len(u.Source.Errs) > 0 || len(r.out.Missing) != missing {
		return u
	}
	rec := &rendercache.Record{Deps: list, Warnings: r.out.Warnings[warned:]}
	for _, src := range r.out.Charts[noted:] {
		data, err := json.Marshal(src)
		if err != nil {
			return u
		}
		rec.Extra = append(rec.Extra, string(data))
	}
	for _, ro := range u.Source.Objects {
		rec.Objects = append(rec.Objects, rendercache.ObjectOf(ro))
	}
	st.Put(slot, rec)
	return u
}

// restore returns the unit a HelmRelease's record holds, nil without a
// usable record.
func (r *releaseRenderer) restore(o *manifest.Object, rec *rendercache.Record) *Unit {
	if rec == nil {
		return nil
	}
	var sources []charts.Source
	for _, e := range rec.Extra {
		var src charts.Source
		if json.Unmarshal([]byte(e), &src) != nil {
			return nil
		}
		sources = append(sources, src)
	}
	objs, ok := rec.MakeObjects()
	if !ok {
		return nil
	}
	r.out.Warnings = append(r.out.Warnings, rec.Warnings...)
	r.out.Charts = append(r.out.Charts, sources...)
	return &Unit{Kind: "helmrelease", Dir: releaseUnitDir(o), Source: &manifest.Source{Path: o.File, Objects: objs}}
}
