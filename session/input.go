package session

import (
	"path/filepath"
	"strings"

	"github.com/kilnhq/kiln/compiler"
	"github.com/kilnhq/kiln/discover"
	"github.com/kilnhq/kiln/discover/argocd"
	"github.com/kilnhq/kiln/discover/charts"
	"github.com/kilnhq/kiln/discover/flux"
	"github.com/kilnhq/kiln/internal/parallel"
	"github.com/kilnhq/kiln/internal/pathkey"
	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules"
)

// The input step: every command reads what it judges here, in one way.
// discover finds and renders (the run's excludes, the output directory
// left out, kiln fix's edits read in place of the files); kiln lint
// streams what it found, a file at a time (package lint compiles the App
// specs in its first pass); every other command calls read, which reads
// the files into memory and compiles the App specs (Compile, which kiln
// fn calls for the objects it is handed).

// readOptions are what a command reads differently from kiln lint.
type readOptions struct {
	// outDir is never read: a build's output is not its input.
	outDir string
	// edited are files read with this content instead of what is on disk
	// (kiln fix's edits, written or not), by path as discovered.
	edited map[string][]byte
	// plain renders no kustomization or chart: every manifest file is
	// read as it is (kiln build and argocd generate take App specs and
	// the files beside them; kustomize's own files are not read).
	plain bool
	// dropConfigs leaves out the files App specs read as configs (kiln
	// build: a config file is the spec's, not an input of its own).
	dropConfigs bool
	// keepData keeps each plain file's bytes (kiln fix edits them).
	keepData bool
	// charts is the chart cache HelmReleases render from (nil: the
	// default one; kiln fetch names the one it fills).
	charts *charts.Cache
	// cache is where rendered units are remembered across runs (kiln lint
	// and kiln diff: renderCache); nil: every unit is rendered.
	cache manifest.Cache
}

// input is what the paths hold, in memory.
type input struct {
	found *discover.Result
	// set holds the plain files read, in input order, then the rendered
	// units; set.Errs are discovery's errors.
	set *manifest.Set
	// files are the plain files (a prefix of set.Sources) and data their
	// bytes, with keepData.
	files []*manifest.Source
	data  [][]byte
	// x is every object with the App specs compiled (x.All, in input
	// order); x.Errors are the specs that do not compile.
	x compiler.Expansion
}

// discover finds what the paths (default ".") hold and renders the
// kustomizations and charts, as the run's settings say.
func (s *Session) discover(paths []string, o readOptions) *discover.Result {
	if len(paths) == 0 {
		paths = []string{"."}
	}
	excluded := s.Settings.Excluded
	if o.outDir != "" {
		absOut, _ := filepath.Abs(o.outDir)
		excluded = func(p string) bool { return s.Settings.Excluded(p) || within(absOut, p) }
	}
	var edited map[string][]byte
	if len(o.edited) > 0 {
		edited = make(map[string][]byte, len(o.edited))
		for p, data := range o.edited {
			edited[pathkey.Real(p)] = data
		}
	}
	return discover.Discover(paths, discover.Options{
		KubeVersion: s.Options.KubeVersion,
		Excluded:    excluded,
		Edited:      edited,
		Chart:       s.Settings.Chart,
		Plain:       o.plain,
		Charts:      o.charts,
		Cache:       o.cache,
		Rendered:    onRender,
		Controllers: []discover.Controller{&flux.Controller{Sources: s.Settings.FluxSources},
			&argocd.Controller{RepoURLs: s.Settings.ArgoCDRepoURLs, Parameters: s.Settings.ArgoCDGenerators, Excluded: excluded}},
	})
}

// read is the input step of every command but kiln lint: what discover
// found, read into memory, and Compile. The error is one setting a
// namespace met; input problems are in errs.
func (s *Session) read(paths []string, o readOptions) (*input, error) {
	return s.readFound(s.discover(paths, o), o)
}

// readFound is read of what discover found (kiln diff lints the same
// discovery it reads).
func (s *Session) readFound(found *discover.Result, o readOptions) (*input, error) {
	in := &input{found: found, files: make([]*manifest.Source, len(found.Files))}
	if o.keepData {
		in.data = make([][]byte, len(found.Files))
	}
	parallel.Each(len(found.Files), func(i int) {
		src, data := s.readFile(found.Files[i], o)
		in.files[i] = src
		if o.keepData {
			in.data[i] = data
		}
	})
	in.set = &manifest.Set{Sources: append([]*manifest.Source(nil), in.files...), Errs: found.Errs}
	for _, u := range found.Units {
		in.set.Sources = append(in.set.Sources, u.Source)
	}
	if o.dropConfigs {
		compiler.DropConfigFiles(in.set)
	}
	var err error
	in.x, err = s.Compile(in.set.Objects())
	return in, err
}

// Compile is the last part of the input step, for objects read or handed
// over (a KRM ResourceList's items): the objects without a namespace get
// the run's (Settings.Namespace: Argo CD's application namespace), and the
// App specs among them are compiled. The error is one setting a namespace
// met; the specs' problems are in the Expansion's Errors.
func (s *Session) Compile(objs []*manifest.Object) (compiler.Expansion, error) {
	return compiler.ExpandIn(objs, s.Settings.Namespace)
}

// readFile reads one plain file ("-": the session's stdin), from
// o.edited when it has its new content, and returns its bytes with
// o.keepData.
func (s *Session) readFile(path string, o readOptions) (*manifest.Source, []byte) {
	data, edited := o.edited[path]
	if !edited && !o.keepData {
		return manifest.ReadFile(path, s.Stdin), nil
	}
	name := path
	if !edited {
		var err error
		if data, name, err = manifest.ReadBytes(path, s.Stdin); err != nil {
			return &manifest.Source{Path: name, Errs: []error{err}}, nil
		}
	}
	src := &manifest.Source{Path: name}
	src.Objects, src.Skipped, src.Errs = manifest.ParseSkipping(name, data)
	return src, data
}

// errs are the input problems: discovery's, each file's and unit's, then
// the App specs'.
func (in *input) errs() []error {
	return append(in.set.Errors(), in.x.Errors...)
}

// listed lists each file and unit read with its objects, for the reports.
func (in *input) listed() []rules.FileObjects {
	out := make([]rules.FileObjects, 0, len(in.set.Sources))
	for _, src := range in.set.Sources {
		fo := rules.FileObjects{File: src.Path}
		for _, o := range src.Objects {
			fo.Objects = append(fo.Objects, o.Ref())
		}
		out = append(out, fo)
	}
	return out
}

// within reports whether file is under dir (absolute; "" for none).
func within(dir, file string) bool {
	if dir == "" {
		return false
	}
	abs, err := filepath.Abs(file)
	if err != nil {
		return false
	}
	rel, err := filepath.Rel(dir, abs)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
