package discover

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

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
}

// isComponent reports whether a kustomization file is a kustomize Component.
func isComponent(file string) bool {
	data, err := os.ReadFile(file)
	if err != nil {
		return false
	}
	var k struct{ Kind string }
	return yaml.Unmarshal(data, &k) == nil && k.Kind == "Component"
}

// buildKustomizations builds each kustomization directory, in parallel,
// results in the order of dirs.
//
// kustomize prints deprecation warnings to os.Stderr once per
// kustomization it reads (a base read by ten overlays: ten times); they are
// collected and returned once each.
func buildKustomizations(dirs []string, opts Options) ([]*kustBuild, []string) {
	out := make([]*kustBuild, len(dirs))
	notes := captureStderr()
	work := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				out[i] = buildKustomization(dirs[i])
			}
		}()
	}
	for i := range dirs {
		work <- i
	}
	close(work)
	wg.Wait()
	return out, notes()
}

// captureStderr points os.Stderr at a pipe until the returned function is
// called, which restores it and returns the distinct lines written, in order.
func captureStderr() func() []string {
	r, w, err := os.Pipe()
	if err != nil {
		return func() []string { return nil }
	}
	saved := os.Stderr
	os.Stderr = w
	done := make(chan []string)
	go func() {
		data, _ := io.ReadAll(r)
		var lines []string
		seen := map[string]bool{}
		for _, l := range strings.Split(string(data), "\n") {
			if l = strings.TrimSpace(strings.TrimPrefix(l, "# ")); l != "" && !seen[l] {
				seen[l] = true
				lines = append(lines, l)
			}
		}
		done <- lines
	}()
	return func() []string {
		os.Stderr = saved
		w.Close()
		lines := <-done
		r.Close()
		return lines
	}
}

// buildKustomization runs kustomize's own kustomizer (krusty) on dir, with
// plugins, exec functions and Helm disabled (kustomize's defaults) and
// remote bases refused before the build can fetch them.
func buildKustomization(dir string) *kustBuild {
	b := &kustBuild{dir: dir, file: kustomizationFile(dir), read: map[string]bool{}}
	src := &manifest.Source{Path: b.file}
	b.source = src
	b.component = isComponent(b.file)
	if ref, pos := findRemote(dir, map[string]bool{}); ref != "" {
		b.remote, b.remotePos = ref, pos
		return b
	}
	rfs := &recordingFS{FileSystem: filesys.MakeFsOnDisk(), root: absOr(b.file), read: b.read}
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	m, err := k.Run(rfs, absOr(dir))
	if err != nil && needsPlugin(err) {
		b.plugin = plainKustomizeError(err)
		return b
	}
	if err != nil {
		src.Errs = append(src.Errs, &manifest.Error{Pos: manifest.Position{File: b.file, Line: 1, Column: 1}, Msg: "kustomize build failed: " + plainKustomizeError(err)})
		return b
	}
	origins := newOriginIndex()
	for i, r := range m.Resources() {
		origin, _ := r.GetOrigin()
		node, err := resourceNode(r)
		if err != nil {
			src.Errs = append(src.Errs, &manifest.Error{Pos: manifest.Position{File: b.file, Line: 1, Column: 1}, Msg: "kustomize output: " + err.Error()})
			continue
		}
		file := origins.place(dir, b.file, origin, node)
		o, err := manifest.NewRenderedObject(file, dir, i, node)
		if err != nil {
			src.Errs = append(src.Errs, err)
			continue
		}
		src.Objects = append(src.Objects, o)
	}
	return b
}

// resourceNode returns a resource's YAML without kustomize's origin annotation.
func resourceNode(r *resource.Resource) (*yaml.Node, error) {
	rn := r.DeepCopy()
	annos := rn.GetAnnotations()
	if _, ok := annos[originAnnotation]; ok {
		delete(annos, originAnnotation)
		if err := rn.SetAnnotations(annos); err != nil {
			return nil, err
		}
	}
	data, err := rn.AsYAML()
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

const originAnnotation = "config.kubernetes.io/origin"

// plainKustomizeError drops kustomize's wrapping of absolute paths where it
// can, keeping its message.
func plainKustomizeError(err error) string {
	msg := err.Error()
	if wd, werr := os.Getwd(); werr == nil {
		msg = strings.ReplaceAll(msg, wd+string(filepath.Separator), "")
	}
	return msg
}

// recordingFS is the disk, recording every file a build reads and adding
// buildMetadata: [originAnnotations] to the root kustomization so that each
// object says which file it came from.
type recordingFS struct {
	filesys.FileSystem
	root string
	mu   sync.Mutex
	read map[string]bool
}

func (f *recordingFS) ReadFile(path string) ([]byte, error) {
	data, err := f.FileSystem.ReadFile(path)
	if err != nil {
		return data, err
	}
	abs := absOr(path)
	f.mu.Lock()
	f.read[abs] = true
	f.mu.Unlock()
	if abs == f.root {
		return withOriginAnnotations(data), nil
	}
	return data, nil
}

// withOriginAnnotations adds originAnnotations to a kustomization's
// buildMetadata (in memory; the user's file is never written).
func withOriginAnnotations(data []byte) []byte {
	rn, err := yaml.Parse(string(data))
	if err != nil {
		return data
	}
	var k types.Kustomization
	if err := yaml.Unmarshal(data, &k); err != nil {
		return data
	}
	for _, m := range k.BuildMetadata {
		if m == types.OriginAnnotations {
			return data
		}
	}
	list := append(append([]string(nil), k.BuildMetadata...), types.OriginAnnotations)
	if err := rn.PipeE(yaml.SetField("buildMetadata", yaml.NewListRNode(list...))); err != nil {
		return data
	}
	out, err := rn.String()
	if err != nil {
		return data
	}
	return []byte(out)
}

// findRemote returns the first remote reference (a URL or git repository)
// among the resources, bases and components of the kustomization in dir or
// of the local kustomizations it includes, with where it is written.
func findRemote(dir string, seen map[string]bool) (string, manifest.Position) {
	file := kustomizationFile(dir)
	if file == "" || seen[absOr(dir)] {
		return "", manifest.Position{}
	}
	seen[absOr(dir)] = true
	data, err := os.ReadFile(file)
	if err != nil {
		return "", manifest.Position{}
	}
	var doc yaml.Node
	if yaml.Unmarshal(data, &doc) != nil || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return "", manifest.Position{}
	}
	root := doc.Content[0]
	for i := 0; i+1 < len(root.Content); i += 2 {
		switch root.Content[i].Value {
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
			if _, err := os.Stat(local); err == nil {
				if r, pos := findRemote(local, seen); r != "" {
					return r, pos
				}
				continue
			}
			if isRemote(ref) {
				return ref, manifest.Position{File: file, Line: it.Line, Column: it.Column}
			}
		}
	}
	return "", manifest.Position{}
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

// originIndex parses each origin file once and places rendered objects on
// the objects they came from.
type originIndex struct {
	files map[string][]*manifest.Object
}

func newOriginIndex() *originIndex { return &originIndex{files: map[string][]*manifest.Object{}} }

// place sets node's positions from the object the origin names (the
// resource's own file, else the generator's kustomization) and returns the
// file the positions point into.
func (x *originIndex) place(dir, kustFile string, origin *resource.Origin, node *yaml.Node) string {
	clearPositions(node)
	node.Line, node.Column = 1, 1
	if origin == nil {
		return kustFile
	}
	if origin.Repo == "" && origin.Path != "" {
		file := filepath.Join(dir, origin.Path)
		if src := x.match(file, node); src != nil {
			copyPositions(node, src)
		}
		return file
	}
	if origin.ConfiguredIn != "" {
		file := filepath.Join(dir, origin.ConfiguredIn)
		if line := lineOf(file, generatorKey(origin.ConfiguredBy.Kind)); line > 0 {
			node.Line = line
		}
		return file
	}
	return kustFile
}

func generatorKey(kind string) string {
	switch kind {
	case "ConfigMapGenerator":
		return "configMapGenerator:"
	case "SecretGenerator":
		return "secretGenerator:"
	}
	return ""
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

// match returns the node of the object in file a rendered node came from:
// same kind and name, else a name the rendered one contains (a prefix or
// suffix was added), else the only object of that kind.
func (x *originIndex) match(file string, rendered *yaml.Node) *yaml.Node {
	objs, ok := x.files[file]
	if !ok {
		data, err := os.ReadFile(file)
		if err == nil {
			objs, _ = manifest.Parse(file, data)
		}
		x.files[file] = objs
	}
	kind := scalarAt(rendered, "kind")
	name := scalarAt(lookupNode(rendered, "metadata"), "name")
	var sameKind []*manifest.Object
	for _, o := range objs {
		if o.Kind == kind {
			sameKind = append(sameKind, o)
		}
	}
	for _, o := range sameKind {
		if o.Name == name {
			return o.Node()
		}
	}
	for _, o := range sameKind {
		if o.Name != "" && strings.Contains(name, o.Name) {
			return o.Node()
		}
	}
	if len(sameKind) == 1 {
		return sameKind[0].Node()
	}
	return nil
}

// needsPlugin reports a build that failed because it needs a generator or
// transformer plugin or a KRM function (exec or container), which kustomize
// runs only with --enable-alpha-plugins and kiln never runs.
func needsPlugin(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "external plugins disabled") || strings.Contains(msg, "unable to load external plugin") ||
		strings.Contains(msg, "function") && strings.Contains(msg, "disabled")
}
