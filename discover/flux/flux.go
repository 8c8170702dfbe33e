// Package flux renders Flux Kustomizations (kustomize.toolkit.fluxcd.io)
// found in the input as kustomize-controller builds them, with Flux's own
// code (github.com/fluxcd/pkg/kustomize: the generator that writes a
// kustomization.yaml where spec.path has none and adds the Kustomization's
// patches, images, name prefix and suffix, target namespace and
// components; the envsubst semantics of postBuild substitution), offline.
//
// spec.path is read against the folder of the Kustomization's source: a
// folder flux.sources maps it to, or the lint root for the one Git source
// taken as this repository. A Kustomization another one's build outputs is
// built in turn as that build rendered it (with the patches its parent
// applied); the Kustomizations of files no build reads are the roots. The
// objects each build renders are a discover unit naming its Kustomization.
package flux

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/kilnhq/kiln/discover"
	"github.com/kilnhq/kiln/internal/pathkey"
	"github.com/kilnhq/kiln/manifest"
)

// UnitKind is the discover.Unit kind of a Flux Kustomization's build.
const UnitKind = "flux-kustomization"

// Controller renders the Flux Kustomizations of the input (a
// discover.Controller).
type Controller struct {
	// Sources map Flux sources to folders (flux.sources of .kiln.yaml):
	// keys "Kind/namespace/name" or "namespace/name", folders as the file
	// system finds them.
	Sources map[string]string
	// Builds are the Kustomizations Render built, in order (for tools and
	// tests that compare them with another build).
	Builds []*Build
}

// Build is one Flux Kustomization built.
type Build struct {
	// Object is the Kustomization as it was built: as written, or as its
	// parent's build rendered it.
	Object map[string]any
	// Pos is where it is written.
	Pos manifest.Position
	// Dir is spec.path against its source's folder.
	Dir string
	// Vars are the postBuild variables kiln resolved from substituteFrom
	// (substitute's own are in Object).
	Vars map[string]string
	// Unit holds the rendered objects.
	Unit *discover.Unit
}

// Name returns the Kustomization's namespace/name.
func (b *Build) Name() string {
	return str(meta(b.Object), "namespace") + "/" + str(meta(b.Object), "name")
}

// Render builds the Flux Kustomizations of the input.
func (c *Controller) Render(in *discover.ControllerInput) *discover.ControllerOutput {
	r := &run{in: in, c: c, out: &discover.ControllerOutput{Consumed: map[string]bool{}}, cache: map[string]*result{}, unresolved: map[sourceRef][]string{}, unresolvedPos: map[sourceRef]manifest.Position{}}
	var objs []*object
	for _, f := range in.Files {
		if in.Marks[f]&(discover.MarkToolkit|discover.MarkFluxExtra) == 0 {
			continue
		}
		objs = append(objs, readFile(f)...)
	}
	for _, u := range in.Units {
		for _, o := range u.Source.Objects {
			if strings.Contains(o.APIVersion, "fluxcd") {
				if x := fromManifest(o); x != nil {
					objs = append(objs, x)
				}
			}
		}
	}
	var found []*kustomization
	for _, o := range objs {
		switch {
		case isKustomization(o):
			found = append(found, &kustomization{obj: o})
		case o.group() == "fluxcd.controlplane.io" && o.kind() == "FluxInstance":
			if k := instanceKustomization(o); k != nil {
				found = append(found, &kustomization{obj: k})
			}
		}
	}
	if len(objs) == 0 {
		return nil
	}
	sources := map[string]string{}
	for k, v := range c.Sources {
		sources[k] = v
	}
	r.res = newResolver(sources, in.Roots, objs, found)
	r.out.GitSource = r.res.gitSource
	if len(found) == 0 {
		return r.out
	}
	if r.res.repo.kind != "" {
		r.out.Warnings = append(r.out.Warnings, fmt.Errorf("note: flux: %s is taken as this repository (%s), %s; flux.sources in .kiln.yaml maps sources to folders",
			r.res.repo, r.res.rootFor(found[0].obj.pos.File), r.res.repoBy))
	}
	r.renderAll(found)
	r.sayUnresolved()
	return r.out
}

func isKustomization(o *object) bool {
	return o.group() == "kustomize.toolkit.fluxcd.io" && o.kind() == "Kustomization"
}

// kustomization is a Flux Kustomization to build.
type kustomization struct {
	obj *object
}

func (k *kustomization) spec() map[string]any {
	s, _ := k.obj.content["spec"].(map[string]any)
	return s
}

// id is the Kustomization's namespace/name.
func (k *kustomization) id() string { return k.obj.namespace() + "/" + k.obj.name() }

// run is one Render.
type run struct {
	in    *discover.ControllerInput
	c     *Controller
	res   *resolver
	out   *discover.ControllerOutput
	cache map[string]*result
	// input are the ConfigMaps and Secrets of the input files (read when
	// a substituteFrom first needs them).
	input []*object
	read  bool
	// unresolved are the Kustomizations of each source kiln cannot
	// resolve, said once per source.
	unresolved    map[sourceRef][]string
	unresolvedPos map[sourceRef]manifest.Position
	unresolvedWhy map[sourceRef]string
}

// renderAll builds the roots (Kustomizations whose file no other
// Kustomization's build reads) and the trees under them, then each
// Kustomization of the input that no tree reached, once. Every
// Kustomization of the input is built first as written (a probe: what
// its build reads decides the roots); a tree's build of one its parent
// left unchanged is that build again (cached), and only a tree's builds
// are units.
func (r *run) renderAll(found []*kustomization) {
	first := make([]*result, len(found))
	for i, k := range found {
		first[i] = r.build(k, nil)
	}
	var roots []int
	for i, k := range found {
		root := true
		for j, b := range first {
			if j != i && b != nil && b.ok() && b.built.Read[pathkey.Real(k.obj.pos.File)] && !sameDoc(found[j], k) {
				root = false
				break
			}
		}
		if root {
			roots = append(roots, i)
		}
	}
	covered := map[manifest.Position]bool{}
	for _, i := range roots {
		r.tree(found[i], covered)
	}
	for _, k := range found {
		if !covered[k.obj.pos] {
			r.tree(k, covered)
		}
	}
}

// sameDoc reports two Kustomizations read from one document (a file and
// the kustomize build that read it).
func sameDoc(a, b *kustomization) bool {
	return a.obj.pos == b.obj.pos
}

// tree builds root and, in turn, the Kustomizations each build outputs,
// each namespace/name once (a Kustomization that outputs itself or an
// ancestor is not built again).
func (r *run) tree(root *kustomization, covered map[manifest.Position]bool) {
	if covered[root.obj.pos] {
		return
	}
	covered[root.obj.pos] = true
	seen := map[string]bool{root.id(): true}
	var treeObjs []*object
	queue := []*kustomization{root}
	for len(queue) > 0 {
		k := queue[0]
		queue = queue[1:]
		res := r.build(k, treeObjs)
		if res == nil {
			continue
		}
		r.emit(k, res, root.obj.cluster)
		if !res.ok() {
			continue
		}
		var children []*kustomization
		for _, o := range res.built.Source.Objects {
			x := fromManifest(o)
			if x == nil {
				continue
			}
			treeObjs = append(treeObjs, x)
			if isKustomization(x) {
				covered[x.pos] = true
				child := &kustomization{obj: x}
				if !seen[child.id()] {
					seen[child.id()] = true
					children = append(children, child)
				}
			}
		}
		sort.SliceStable(children, func(i, j int) bool { return children[i].id() < children[j].id() })
		queue = append(queue, children...)
	}
}

// emit makes a built Kustomization a unit deploying into cluster (its
// tree's root's); what it read is consumed.
func (r *run) emit(k *kustomization, res *result, cluster string) {
	if res.emitted {
		return
	}
	res.emitted = true
	r.out.Warnings = append(r.out.Warnings, res.notes...)
	if res.unit == nil {
		return
	}
	for _, o := range res.unit.Source.Objects {
		o.Cluster = cluster
	}
	r.out.Units = append(r.out.Units, res.unit)
	r.c.Builds = append(r.c.Builds, &Build{Object: k.obj.content, Pos: k.obj.pos, Dir: res.dir, Vars: res.vars, Unit: res.unit})
	if res.ok() {
		for f := range res.built.Read {
			r.out.Consumed[f] = true
		}
	}
}

// sayUnresolved warns once per source kiln cannot resolve, naming the
// Kustomizations it leaves unbuilt.
func (r *run) sayUnresolved() {
	refs := make([]sourceRef, 0, len(r.unresolved))
	for s := range r.unresolved {
		refs = append(refs, s)
	}
	sort.Slice(refs, func(i, j int) bool { return refs[i].String() < refs[j].String() })
	for _, s := range refs {
		ks := dedupe(r.unresolved[s])
		what := "Kustomization " + ks[0] + ", which builds from it, is not built"
		if len(ks) > 1 {
			what = fmt.Sprintf("the %d Kustomizations that build from it are not built (%s)", len(ks), strings.Join(ks, ", "))
		}
		r.out.Warnings = append(r.out.Warnings, &manifest.Error{Pos: r.unresolvedPos[s],
			Msg: fmt.Sprintf("warning: flux: source %s is %s; %s", s, r.unresolvedWhy[s], what)})
	}
}

func dedupe(ss []string) []string {
	sort.Strings(ss)
	out := ss[:0]
	for i, s := range ss {
		if i == 0 || s != ss[i-1] {
			out = append(out, s)
		}
	}
	return out
}

// cacheKey is what a build depends on: the Kustomization, its folder and
// the variables resolved for it.
func cacheKey(content map[string]any, dir string, vars map[string]string) string {
	c, _ := json.Marshal(content)
	v, _ := json.Marshal(vars)
	return dir + "\x00" + string(c) + "\x00" + string(v)
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
