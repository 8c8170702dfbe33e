package discover

import (
	"bytes"
	"fmt"
	"github.com/kilnhq/kiln/internal/pathkey"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/kilnhq/kiln/discover/rendercache"
	"github.com/kilnhq/kiln/internal/parallel"
	"github.com/kilnhq/kiln/internal/yamlnode"
	"github.com/kilnhq/kiln/manifest"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/resource"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// kustBuild is one kustomization built (or skipped).
type kustBuild struct {
	dir, file string
	// read are the absolute paths of every file the build read.
	read map[string]bool
	// remote names a remote base or resource; the build is then skipped.
	remote    string
	remotePos manifest.Position
	// plugin is set when the build needs a plugin or KRM function, which
	// kiln never runs (no code from the repository runs); it is skipped.
	plugin string
	source *manifest.Source
	// component is set for kind: Component, which only the kustomizations
	// including it build.
	component bool
	// failed is set when kustomize could not build it (the error is in source).
	failed bool
	// req is set for a build a Controller asked for (BuildRequest).
	req *BuildRequest
	// deps records what the build read, for the render cache (nil: none),
	// and parts where the objects' detachable schemas are written.
	deps  *rendercache.Deps
	parts map[*manifest.Object][]partRef
}

// buildKustomizations builds each kustomization directory, in parallel,
// results in the order of dirs.
//
// kustomize prints deprecation warnings to os.Stderr once per
// kustomization it reads (a base read by ten overlays: ten times), and a
// few other lines through the log package; they are collected and
// returned once each, for the caller to say in its own words.
func buildKustomizations(dirs []string, shared *buildShared) ([]*kustBuild, []string) {
	out := make([]*kustBuild, len(dirs))
	notes := captureOutput()
	parallel.Each(len(dirs), func(i int) { out[i] = buildKustomization(dirs[i], shared) })
	printed := notes()
	shared.store.Commit(len(kustomizeNotes(printed)) == 0)
	return out, printed
}

// buildShared is what the builds of one discovery share: the resource
// files as kustomize reads them, parsed once.
type buildShared struct {
	sources *sources
	edited  map[string][]byte // Options.Edited
	// store remembers builds across runs (nil: none); rendered is
	// Options.Rendered.
	store    *rendercache.Store
	rendered func(kind, name string)
}

// buildKustomization runs kustomize's own kustomizer (krusty) on dir, with
// plugins, exec functions and Helm disabled (kustomize's defaults) and
// remote bases refused before the build can fetch them.
func buildKustomization(dir string, shared *buildShared) *kustBuild {
	return runBuild(&kustBuild{dir: dir, file: kustomizationFile(dir), read: map[string]bool{}}, shared)
}

// runBuild builds b (its dir, file and, for a Controller's build, req
// set), or restores what building it gave from the render cache.
func runBuild(b *kustBuild, shared *buildShared) *kustBuild {
	key, ok := buildKey(b, shared.store)
	var slot rendercache.Slot
	if ok {
		var rec *rendercache.Record
		if rec, slot = shared.store.Lookup(key, nil); restoreBuild(b, rec, shared.store, shared.sources) {
			return b
		}
	}
	if shared.rendered != nil {
		name := b.dir
		if b.req != nil && b.req.Unit != "" {
			name = b.req.Unit
		}
		shared.rendered("kustomization", name)
	}
	if ok {
		b.deps = &rendercache.Deps{}
	}
	build(b, shared)
	if ok {
		if rec := buildRecord(b, shared.store); rec != nil {
			withoutSchemas(b, func() { shared.store.Hold(slot, rec) })
		}
	}
	return b
}

// build runs kustomize for runBuild.
func build(b *kustBuild, shared *buildShared) {
	dir := b.dir
	src := &manifest.Source{Path: b.file}
	b.source = src
	var tree treeFacts
	if b.req != nil && b.req.Kustomization != nil {
		tree = scanTreeWith(dir, b.req.Kustomization)
	} else {
		tree = scanTree(dir)
	}
	b.component = tree.component
	if tree.remote != "" {
		b.remote, b.remotePos = tree.remote, tree.remotePos
		return
	}
	// kustomize reads the schemas of the CRDs a crds: field names; a
	// controller's transform reads every resource whole.
	stub := !tree.crdsField && (b.req == nil || b.req.Transform == nil)
	objs, errs, err := runKustomize(b, tree, shared, stub)
	if stub && err != nil {
		clear(b.read)
		objs, errs, err = runKustomize(b, tree, shared, false)
	}
	if err != nil && needsPlugin(err) {
		b.plugin = plainKustomizeError(err)
		return
	}
	if err != nil {
		if e, ok := missingResource(b.file, err); ok {
			src.Errs = append(src.Errs, e)
			b.failed = true
			return
		}
		src.Errs = append(src.Errs, &manifest.Error{Pos: manifest.Position{File: b.file, Line: 1, Column: 1}, Msg: "kustomize build failed: " + plainKustomizeError(err)})
		b.failed = true
		return
	}
	src.Objects, src.Errs = objs, append(src.Errs, errs...)
	return
}

// runKustomize builds b.dir, reading large CRDs with schema placeholders
// when stub is set; err is the build's error, or errStubTouched.
func runKustomize(b *kustBuild, tree treeFacts, shared *buildShared, stub bool) ([]*manifest.Object, []error, error) {
	rfs := &recordingFS{FileSystem: filesys.MakeFsOnDisk(), read: b.read, resources: tree.resources, sources: shared.sources, stub: stub, edited: shared.edited,
		deps: b.deps, store: shared.store}
	opts := krusty.MakeDefaultOptions()
	unit := b.dir
	if r := b.req; r != nil {
		if r.Kustomization != nil {
			rfs.overlay, rfs.overlayData = pathkey.Real(r.KustomizationFile), r.Kustomization
		}
		if r.LoadAnywhere {
			opts.LoadRestrictions = types.LoadRestrictionsNone
		}
		if r.Unit != "" {
			unit = r.Unit
		}
	}
	k := krusty.MakeKustomizer(opts)
	m, err := k.Run(rfs, pathkey.Real(b.dir))
	if err != nil {
		return nil, nil, err
	}
	var objs []*manifest.Object
	var errs []error
	for i, r := range m.Resources() {
		if b.req != nil && b.req.Transform != nil {
			if err := b.req.Transform(r); err != nil {
				errs = append(errs, &manifest.Error{Pos: manifest.Position{File: b.file, Line: 1, Column: 1}, Msg: err.Error()})
				continue
			}
		}
		node, err := resourceNode(r)
		if err != nil {
			errs = append(errs, &manifest.Error{Pos: manifest.Position{File: b.file, Line: 1, Column: 1}, Msg: "kustomize output: " + err.Error()})
			continue
		}
		var schemas placed
		var parts []manifest.Detachable
		var refs []partRef
		if stub {
			if schemas, parts, refs, err = shared.sources.restore(node); err != nil {
				return nil, nil, err
			}
		}
		originFile, originLine := takeOrigin(node)
		shown := originFile
		if rel, err := filepath.Rel(pathkey.Real(b.dir), originFile); err == nil && originFile != "" {
			// The path as the user wrote the directory: relative stays relative.
			shown = filepath.Join(b.dir, rel)
		}
		file := place(shared.sources, b.file, shown, originFile, originLine, tree.generators, node, schemas)
		fillPositions(node, schemas)
		o, err := manifest.NewRenderedObject(file, unit, i, node, parts...)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if len(refs) > 0 && b.deps != nil {
			if b.parts == nil {
				b.parts = map[*manifest.Object][]partRef{}
			}
			b.parts[o] = refs
		}
		objs = append(objs, o)
	}
	return objs, errs, nil
}

// resourceNode returns a resource's YAML as a node of its own.
func resourceNode(r *resource.Resource) (*yaml.Node, error) {
	data, err := r.AsYAML()
	if err != nil {
		return nil, err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	if len(doc.Content) == 0 {
		return nil, fmt.Errorf("empty resource")
	}
	return doc.Content[0], nil
}

// plainKustomizeError drops kustomize's wrapping of absolute paths where it
// can, keeping its message.
func plainKustomizeError(err error) string {
	msg := err.Error()
	if wd, werr := os.Getwd(); werr == nil {
		msg = strings.ReplaceAll(msg, wd+string(filepath.Separator), "")
	}
	return msg
}

// recordingFS is the disk, recording every file a build reads and giving
// kustomize the resource files as sources prepares them.
type recordingFS struct {
	filesys.FileSystem
	mu        sync.Mutex
	read      map[string]bool
	resources map[string]bool
	sources   *sources
	stub      bool
	edited    map[string][]byte // Options.Edited
	// overlay is a kustomization file (absolute) read as overlayData,
	// whether or not it is on disk (a Controller's generated one).
	overlay     string
	overlayData []byte
	// deps records what the build read and probed for the render cache
	// (nil: nothing recorded).
	deps  *rendercache.Deps
	store *rendercache.Store
}

func (f *recordingFS) Exists(path string) bool {
	if f.overlay != "" && pathkey.Real(path) == f.overlay {
		return true
	}
	f.deps.Stat(f.store, path)
	return f.FileSystem.Exists(path)
}

func (f *recordingFS) IsDir(path string) bool {
	f.deps.Stat(f.store, path)
	return f.FileSystem.IsDir(path)
}

// Glob, ReadDir and Walk read what the render cache does not key: a build
// that calls them is not remembered.
func (f *recordingFS) Glob(pattern string) ([]string, error) {
	f.deps.Unkeyed()
	return f.FileSystem.Glob(pattern)
}

func (f *recordingFS) ReadDir(path string) ([]string, error) {
	f.deps.Unkeyed()
	return f.FileSystem.ReadDir(path)
}

func (f *recordingFS) Walk(path string, walkFn filepath.WalkFunc) error {
	f.deps.Unkeyed()
	return f.FileSystem.Walk(path, walkFn)
}

func (f *recordingFS) ReadFile(path string) ([]byte, error) {
	if f.overlay != "" && pathkey.Real(path) == f.overlay {
		return f.overlayData, nil
	}
	data, err := f.FileSystem.ReadFile(path)
	if err != nil {
		f.deps.Stat(f.store, path)
		return data, err
	}
	f.deps.File(f.store, path, data)
	abs := pathkey.Real(path)
	if e, ok := f.edited[abs]; ok {
		data = e
	}
	f.mu.Lock()
	f.read[abs] = true
	f.mu.Unlock()
	if f.resources[abs] {
		return f.sources.resource(abs, data, f.stub), nil
	}
	return data, nil
}

// treeFacts is what kiln needs to know of a kustomization and the local
// kustomizations it includes before building it.
type treeFacts struct {
	// component is set when the kustomization itself is a kind: Component.
	component bool
	// remote is the first remote reference (a URL or git repository) among
	// resources, bases and components, with where it is written.
	remote    string
	remotePos manifest.Position
	// crdsField is set when one of them has a crds: field.
	crdsField bool
	// resources are the absolute paths of the files listed as resources.
	resources map[string]bool
	// generators are the ConfigMap and Secret generators, in tree order.
	generators []generator
}

// generator is one entry of a configMapGenerator or secretGenerator.
type generator struct {
	file, key, name string
}

// scanTree reads the kustomization in dir and the local ones it includes.
func scanTree(dir string) treeFacts {
	t := treeFacts{resources: map[string]bool{}}
	t.scan(dir, map[string]bool{}, nil)
	return t
}

// scanTreeWith is scanTree with data as dir's own kustomization file.
func scanTreeWith(dir string, data []byte) treeFacts {
	t := treeFacts{resources: map[string]bool{}}
	t.scan(dir, map[string]bool{}, data)
	return t
}

func (t *treeFacts) scan(dir string, seen map[string]bool, data []byte) {
	file := kustomizationFile(dir)
	if (file == "" && data == nil) || seen[pathkey.Real(dir)] || t.remote != "" {
		return
	}
	seen[pathkey.Real(dir)] = true
	if data == nil {
		var err error
		if data, err = os.ReadFile(file); err != nil {
			return
		}
	}
	var doc yaml.Node
	if yaml.Unmarshal(data, &doc) != nil || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return
	}
	root := doc.Content[0]
	if len(seen) == 1 {
		t.component = scalarAt(root, "kind") == "Component"
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		switch root.Content[i].Value {
		case "crds":
			t.crdsField = true
			continue
		case "configMapGenerator", "secretGenerator":
			for _, g := range root.Content[i+1].Content {
				t.generators = append(t.generators, generator{file: file, key: root.Content[i].Value, name: scalarAt(g, "name")})
			}
			continue
		case "resources", "bases", "components":
		default:
			continue
		}
		for _, it := range root.Content[i+1].Content {
			if it.Kind != yaml.ScalarNode {
				continue
			}
			ref := it.Value
			local := filepath.Join(dir, ref)
			if st, err := os.Stat(local); err == nil {
				if !st.IsDir() {
					t.resources[pathkey.Real(local)] = true
					continue
				}
				t.scan(local, seen, nil)
				if t.remote != "" {
					return
				}
				continue
			}
			if isRemote(ref) {
				t.remote, t.remotePos = ref, manifest.Position{File: file, Line: it.Line, Column: it.Column}
				return
			}
		}
	}
}

// isRemote reports whether a kustomization entry names something kustomize
// would fetch: a URL, a git repository, or a host/path like github.com/org/repo.
func isRemote(ref string) bool {
	if strings.Contains(ref, "://") || strings.HasPrefix(ref, "git@") || strings.Contains(ref, "?ref=") ||
		strings.Contains(ref, ".git/") || strings.HasSuffix(ref, ".git") || strings.Contains(ref, "//") {
		return true
	}
	first := strings.SplitN(ref, "/", 2)[0]
	return !strings.HasPrefix(ref, ".") && strings.Contains(first, ".") && strings.Contains(ref, "/")
}

// place sets the positions of node, but for its kept subtrees, from the
// document its origin names (origin, shown to users as file, and the line
// the document starts on), else from its generator's entry, and returns
// the file the positions point into.
func place(src *sources, kustFile, file, origin string, line int, gens []generator, node *yaml.Node, keep placed) string {
	clearPositions(node, keep)
	node.Line, node.Column = 1, 1
	if file != "" {
		if o := match(src.objects(origin), line, node); o != nil {
			src.copyPositions(node, o, keep)
		}
		return file
	}
	if g := generatorOf(gens, node); g != nil {
		if l := lineOf(g.file, g.key+":"); l > 0 {
			node.Line = l
		}
		return g.file
	}
	return kustFile
}

// generatorOf returns the generator a rendered ConfigMap or Secret came
// from: the last (outermost) one of its kind whose name its name holds, the
// longest such name first.
func generatorOf(gens []generator, node *yaml.Node) *generator {
	key := map[string]string{"ConfigMap": "configMapGenerator", "Secret": "secretGenerator"}[scalarAt(node, "kind")]
	name := scalarAt(yamlnode.Value(node, "metadata"), "name")
	var best *generator
	for i := range gens {
		g := &gens[i]
		if g.key == key && g.name != "" && strings.Contains(name, g.name) && (best == nil || len(g.name) >= len(best.name)) {
			best = g
		}
	}
	return best
}

// lineOf returns the 1-based line of the first line of file starting with prefix.
func lineOf(file, prefix string) int {
	if prefix == "" {
		return 0
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return 0
	}
	for i, l := range bytes.Split(data, []byte("\n")) {
		if bytes.HasPrefix(bytes.TrimSpace(l), []byte(prefix)) {
			return i + 1
		}
	}
	return 0
}

// match returns the object among objs (a source file's, as written) a
// rendered object came from: the one of its kind whose document starts on
// line, else the first of its kind and name, else the first of its kind
// whose name its name holds (a prefix or suffix was added), else the only
// one of its kind.
func match(objs []*yaml.Node, line int, rendered *yaml.Node) *yaml.Node {
	kind := scalarAt(rendered, "kind")
	name := scalarAt(yamlnode.Value(rendered, "metadata"), "name")
	var sameKind []*yaml.Node
	for _, o := range objs {
		if scalarAt(o, "kind") == kind {
			if o.Line == line {
				return o
			}
			sameKind = append(sameKind, o)
		}
	}
	for _, o := range sameKind {
		if nameOf(o) == name {
			return o
		}
	}
	for _, o := range sameKind {
		if n := nameOf(o); n != "" && strings.Contains(name, n) {
			return o
		}
	}
	if len(sameKind) == 1 {
		return sameKind[0]
	}
	return nil
}

func nameOf(o *yaml.Node) string { return scalarAt(yamlnode.Value(o, "metadata"), "name") }

// needsPlugin reports a build that failed because it needs a generator or
// transformer plugin or a KRM function (exec or container), which kustomize
// runs only with --enable-alpha-plugins and kiln never runs.
func needsPlugin(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "external plugins disabled") || strings.Contains(msg, "unable to load external plugin") ||
		strings.Contains(msg, "function") && strings.Contains(msg, "disabled")
}
