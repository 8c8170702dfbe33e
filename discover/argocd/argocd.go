// Package argocd renders Argo CD Applications (argoproj.io/v1alpha1)
// found in the input as Argo CD's repo-server generates their manifests,
// offline: a path of this repository as a Helm chart, a kustomization or a
// directory of manifests, with the Application's Helm values and
// parameters or kustomize options, or a chart of kiln's chart cache
// (`kiln fetch`). Helm and kustomize are discovery's (the chart engine of
// discover.ChartRequest, the kustomize build of discover.BuildRequest).
//
// A source is read against this repository when its repoURL is one of
// argocd.repoURLs in .kiln.yaml, a remote of the Git checkout, or, when
// neither says, the one Git repoURL the input's Applications name.
// Applications an Application renders are rendered in turn, each once
// (app of apps); ApplicationSets produce their Applications first
// (appset.go). The objects each source renders are a discover unit
// naming its Application (via), and the files it read are linted through
// it only.
package argocd

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/kilnhq/kiln/discover"
	"github.com/kilnhq/kiln/internal/pathkey"
	"github.com/kilnhq/kiln/manifest"
)

// UnitKind is the discover.Unit kind of what an Application renders.
const UnitKind = "argocd-application"

// group is Argo CD's API group.
const group = "argoproj.io"

// ignoreAnnotation is kiln's suppression annotation (rules.IgnoreAnnotation):
// on an Application it applies to what the Application renders.
const ignoreAnnotation = "kiln.dev/ignore"

// Controller renders the Argo CD Applications and ApplicationSets of the
// input (a discover.Controller).
type Controller struct {
	// RepoURLs are the URLs this repository is known by
	// (argocd.repoURLs of .kiln.yaml).
	RepoURLs []string
	// Parameters are the parameter sets of generators kiln cannot run
	// (clusters, SCM providers, pull requests, plugins), by
	// "namespace/name" of the ApplicationSet (argocd.generators).
	Parameters map[string][]map[string]any
	// Excluded leaves files out of what kiln's own plugin reads
	// (.kiln.yaml's exclude, as `kiln argocd generate` leaves them out);
	// nil: none.
	Excluded func(string) bool
	// Apps are the Applications Render rendered, in order (for tools and
	// tests that compare them with another renderer).
	Apps []*Rendered
}

// Rendered is one Application rendered.
type Rendered struct {
	// Name is the Application's name; Pos where it is written.
	Name string
	Pos  manifest.Position
	// Object is the Application (for a tool that hands it to another
	// renderer).
	Object *manifest.Object
	// Units hold the objects of each source rendered; SourceOf is the
	// index in the Application's sources of each.
	Units    []*discover.Unit
	SourceOf []int
	// Plugins are the sources kiln's own plugin rendered.
	Plugins []PluginRun
}

// PluginRun is a source of an Application that kiln's own plugin rendered
// (RenderPlugin), as Argo CD would run `kiln argocd generate` for it.
type PluginRun struct {
	// Dir is the source's path in this repository; Path and RepoURL are
	// the source's (ARGOCD_APP_SOURCE_PATH, ARGOCD_APP_SOURCE_REPO_URL).
	Dir, Path, RepoURL string
	// Plugin is what Argo CD hands the plugin.
	Plugin *Plugin
	// Objects are what it rendered.
	Objects []*manifest.Object
}

// app is an Application to render.
type app struct {
	obj  *manifest.Object
	spec *application
}

func (a *app) name() string { return a.obj.Name }

func (a *app) id() string {
	ns := a.obj.Namespace
	if ns == "" {
		ns = "argocd"
	}
	return ns + "/" + a.obj.Name
}

// instance is the name Argo CD knows the Application by (its
// InstanceName, which names its .argocd-source-<name>.yaml): the name,
// or namespace_name for an Application outside Argo CD's own namespace
// (taken to be argocd, its default).
func (a *app) instance() string {
	if ns := a.obj.Namespace; ns != "" && ns != "argocd" {
		return ns + "_" + a.obj.Name
	}
	return a.obj.Name
}

// marker and appKind are what make a file worth reading for Argo CD: its
// group, and a kind Application or ApplicationSet (YAML or JSON).
var (
	marker  = []byte(group)
	appKind = regexp.MustCompile(`(?m)(^\s*kind:\s*["']?Application(Set)?["']?\s*(#.*)?$|"kind"\s*:\s*"Application(Set)?")`)
)

// Render renders the Applications of the input.
func (c *Controller) Render(in *discover.ControllerInput) *discover.ControllerOutput {
	r := &run{c: c, in: in, out: &discover.ControllerOutput{Consumed: map[string]bool{}}, done: map[string]bool{}}
	objs := collect(in)
	if objs == nil {
		return nil
	}
	r.namespaces, r.created = map[string]bool{}, map[string]bool{}
	var apps []*app
	var sets []*manifest.Object
	for _, o := range objs {
		if o.Kind == "Namespace" && o.APIVersion == "v1" {
			r.namespaces[o.Name] = true
		}
		switch {
		case isApplication(o):
			if a := r.read(o); a != nil {
				apps = append(apps, a)
			}
		case isApplicationSet(o):
			sets = append(sets, o)
		}
	}
	if len(apps) == 0 && len(sets) == 0 && len(r.out.Errs) == 0 {
		return nil
	}
	r.repo = thisRepository(c.RepoURLs, in.Roots, apps, sets)
	if r.repo.by == "" && len(r.repo.urls) == 1 {
		at := manifest.Position{}
		if len(apps) > 0 {
			at = apps[0].obj.Pos()
		} else {
			at = sets[0].Pos()
		}
		r.out.Warnings = append(r.out.Warnings, &manifest.Error{Pos: at, Msg: fmt.Sprintf(
			"note: argocd: %s is taken as this repository (%s), the one Git repository the Applications name; argocd.repoURLs in .kiln.yaml names it", r.repo.list()[0], shown(r.repo.root))})
	}
	for _, o := range sets {
		apps = append(apps, r.generate(o)...)
	}
	queue := apps
	for len(queue) > 0 {
		a := queue[0]
		queue = queue[1:]
		if r.done[a.id()] {
			continue
		}
		r.done[a.id()] = true
		queue = append(queue, r.render(a)...)
	}
	return r.out
}

// collect returns the objects of the input that are Applications,
// ApplicationSets or Namespaces (those of the plain files that name
// Argo CD's group, of the units and charts), or nil when none is an
// Application or ApplicationSet.
func collect(in *discover.ControllerInput) []*manifest.Object {
	var objs []*manifest.Object
	var nsFiles []string // files that may declare Namespaces, read once Applications are found
	for _, f := range in.Files {
		if f == manifest.Stdin {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if bytes.Contains(data, marker) && appKind.Match(data) {
			objs = append(objs, manifest.ReadFile(f, nil).Objects...)
		} else if bytes.Contains(data, []byte("Namespace")) {
			nsFiles = append(nsFiles, f)
		}
	}
	for _, units := range [][]*discover.Unit{in.Units, in.Charts} {
		for _, u := range units {
			objs = append(objs, u.Source.Objects...)
		}
	}
	found := false
	for _, o := range objs {
		found = found || isApplication(o) || isApplicationSet(o)
	}
	if !found {
		return nil
	}
	for _, f := range nsFiles {
		for _, o := range manifest.ReadFile(f, nil).Objects {
			if o.Kind == "Namespace" {
				objs = append(objs, o)
			}
		}
	}
	return objs
}

func isApplication(o *manifest.Object) bool {
	return o.Kind == "Application" && strings.HasPrefix(o.APIVersion, group+"/")
}

func isApplicationSet(o *manifest.Object) bool {
	return o.Kind == "ApplicationSet" && strings.HasPrefix(o.APIVersion, group+"/")
}

// run is one Render.
type run struct {
	c    *Controller
	in   *discover.ControllerInput
	out  *discover.ControllerOutput
	repo *repository
	// namespaces are the Namespaces the input declares.
	namespaces map[string]bool
	// created are the Namespaces made from managedNamespaceMetadata.
	created map[string]bool
	// cur is the Application being rendered.
	cur *Rendered
	// done are the Applications rendered (namespace/name): an
	// Application that renders itself or an ancestor is not rendered
	// again.
	done map[string]bool
}

// read decodes an Application; one that cannot be read is an error.
func (r *run) read(o *manifest.Object) *app {
	spec, err := readApplication(o)
	if err != nil {
		r.out.Errs = append(r.out.Errs, &manifest.Error{Pos: o.Pos(), Msg: "Application " + o.Name + ": " + err.Error()})
		return nil
	}
	return &app{obj: o, spec: spec}
}

// warn says what kiln does not render of an Application (never an
// input error).
func (r *run) warn(a *app, format string, args ...any) {
	r.out.Warnings = append(r.out.Warnings, &manifest.Error{Pos: a.obj.Pos(), Msg: "warning: argocd: Application " + a.name() + ": " + fmt.Sprintf(format, args...)})
}

// render renders each source of an Application into a unit and returns
// the Applications and ApplicationSets' Applications they output.
func (r *run) render(a *app) []*app {
	rendered := &Rendered{Name: a.name(), Pos: a.obj.Pos(), Object: a.obj}
	r.cur = rendered
	srcs := a.spec.sources()
	if len(srcs) == 0 {
		r.warn(a, "it names no source (spec.source or spec.sources); nothing is rendered")
		return nil
	}
	var children []*app
	for i := range srcs {
		unit := r.renderSource(a, srcs, i)
		if unit == nil {
			continue
		}
		for _, o := range unit.Source.Objects {
			o.Via, o.ViaIgnore = "Application "+a.name(), a.obj.Annotations[ignoreAnnotation]
		}
		if i == 0 {
			unit.Source.Objects = append(r.managedNamespace(a, unitName(a, srcs, i)), unit.Source.Objects...)
		}
		r.out.Units = append(r.out.Units, unit)
		rendered.Units, rendered.SourceOf = append(rendered.Units, unit), append(rendered.SourceOf, i)
		for _, o := range unit.Source.Objects {
			switch {
			case isApplication(o):
				if c := r.read(o); c != nil {
					children = append(children, c)
				}
			case isApplicationSet(o):
				children = append(children, r.generate(o)...)
			}
		}
	}
	r.c.Apps = append(r.c.Apps, rendered)
	sort.SliceStable(children, func(i, j int) bool { return children[i].id() < children[j].id() })
	return children
}

// unitName names the unit of an Application's source i.
func unitName(a *app, srcs []source, i int) string {
	n := fmt.Sprintf("Application %s (%s:%d)", a.name(), a.obj.File, a.obj.Pos().Line)
	if len(srcs) > 1 {
		n += fmt.Sprintf(" source %d", i)
	}
	return n
}

// renderSource renders one source; nil when it renders nothing (a
// source of values only, one kiln does not render: said).
func (r *run) renderSource(a *app, srcs []source, i int) *discover.Unit {
	s := &srcs[i]
	name := unitName(a, srcs, i)
	if s.Chart != "" {
		return r.renderChartSource(a, srcs, i, name)
	}
	if s.Ref != "" && s.Path == "" {
		return nil // values for the other sources ($ref)
	}
	if !r.repo.is(s.RepoURL) {
		r.warn(a, "its source %s is not this repository (kiln reads this repository's files only; argocd.repoURLs in .kiln.yaml names the URLs it is known by); it is not rendered", orQuote(s.RepoURL))
		return nil
	}
	dir, err := r.repoPath(s.Path)
	if err != nil && r.repo.by == "" {
		// This repository's URL was a guess (the one the Applications
		// name): a path it lacks more likely means another repository.
		r.warn(a, "%v; its source %s was taken as this repository only because it is the one Git repository the Applications name, so it may be another one (argocd.repoURLs in .kiln.yaml names this repository's URLs); it is not rendered", err, orQuote(s.RepoURL))
		return nil
	}
	if err != nil {
		return r.failed(a, name, err.Error())
	}
	srcs, files, err := withOverrides(srcs, i, dir, a.instance())
	if err != nil {
		return r.failed(a, name, err.Error())
	}
	r.consumeOverrides(files)
	s = &srcs[i]
	typ, err := s.explicitType()
	if err != nil {
		return r.failed(a, name, err.Error())
	}
	if isKilnPlugin(s, typ, dir) {
		return r.renderKilnPlugin(a, s, dir, name)
	}
	if typ == "" {
		typ = discoverType(dir)
	}
	switch typ {
	case "Plugin":
		r.warn(a, "config management plugin %s is not rendered (kiln runs no plugin; kiln's own is `kiln argocd generate`)", orQuote(s.Plugin.Name))
		return nil
	case "Helm":
		return r.renderHelm(a, srcs, i, dir, name)
	case "Kustomize":
		return r.renderKustomize(a, s, dir, name)
	}
	return r.renderDirectory(a, s, dir, name)
}

// discoverType chooses the tool as the repo-server's discovery does: it
// walks the path in lexical order and the last of Chart.yaml and a
// kustomization file in the path itself wins (a kustomization, when both
// are there); a path with neither is a directory of manifests.
func discoverType(dir string) string {
	if discover.KustomizationFile(dir) != "" {
		return "Kustomize"
	}
	if discover.IsChartDir(dir) {
		return "Helm"
	}
	return "Directory"
}

// repoPath returns the folder of a path of this repository.
func (r *run) repoPath(p string) (string, error) {
	if r.repo.root == "" {
		return "", fmt.Errorf("no directory was named as input to stand for this repository")
	}
	dir := filepath.Join(r.repo.root, filepath.FromSlash(p))
	if rel, err := filepath.Rel(pathkey.Real(r.repo.root), pathkey.Real(dir)); err != nil || strings.HasPrefix(rel, "..") {
		return "", fmt.Errorf("path %q is outside the repository", p)
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("path %q: no directory %s in this repository", p, shown(dir))
	}
	return dir, nil
}

// failed is a unit holding one error of an Application.
func (r *run) failed(a *app, name, msg string) *discover.Unit {
	src := &manifest.Source{Path: a.obj.File}
	src.Errs = append(src.Errs, &manifest.Error{Pos: a.obj.Pos(), Msg: "Application " + a.name() + ": " + msg})
	return &discover.Unit{Kind: UnitKind, Dir: name, Source: src}
}

// consume marks files read as linted through an Application.
func (r *run) consume(read map[string]bool) {
	for f := range read {
		r.out.Consumed[f] = true
	}
}

func orQuote(s string) string {
	if s == "" {
		return `""`
	}
	return s
}

// shown returns a path relative to the working directory where it is
// below it, as users name paths.
func shown(p string) string {
	if !filepath.IsAbs(p) {
		return p
	}
	if wd, err := os.Getwd(); err == nil {
		if rel, err := filepath.Rel(wd, p); err == nil && !strings.HasPrefix(rel, "..") {
			return rel
		}
	}
	return p
}
