package flux

import (
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/kilnhq/kiln/internal/pathkey"
	"github.com/kilnhq/kiln/manifest"
)

// sourceRef names a Flux source: GitRepository, OCIRepository, Bucket or
// ExternalArtifact, in a namespace.
type sourceRef struct{ kind, namespace, name string }

func (r sourceRef) String() string { return r.kind + "/" + r.namespace + "/" + r.name }

// sourceOf returns the source a Kustomization's spec.sourceRef names (its
// namespace defaults to the Kustomization's, its kind to GitRepository).
func sourceOf(spec map[string]any, namespace string) sourceRef {
	ref, _ := spec["sourceRef"].(map[string]any)
	r := sourceRef{kind: str(ref, "kind"), namespace: str(ref, "namespace"), name: str(ref, "name")}
	if r.namespace == "" {
		r.namespace = namespace
	}
	if r.kind == "" {
		r.kind = "GitRepository"
	}
	return r
}

// resolver says which folder a source's artifact is: a folder flux.sources
// maps it to, the lint root for the one Git source taken as this
// repository, or an ArtifactGenerator's copy of either.
type resolver struct {
	// mapped are flux.sources: "Kind/namespace/name" or "namespace/name"
	// → folder.
	mapped map[string]string
	// repo is the Git source taken as this repository ("" kind: none),
	// and why (for the summary).
	repo   sourceRef
	repoBy string
	roots  []string
	// artifacts are the ExternalArtifacts ArtifactGenerators make.
	artifacts map[sourceRef]artifact
}

// artifact is one artifact of an ArtifactGenerator: its copies.
type artifact struct {
	sources map[string]sourceRef // alias → source
	copies  []copyOp
	pos     manifest.Position
}

type copyOp struct{ from, to string }

// gitSource returns the folder a GitRepository stands for as seen from a
// Kustomization or HelmRelease written in file (discover's
// ControllerOutput.GitSource): the one rule for "this repository".
func (r *resolver) gitSource(namespace, name, file string) (string, bool) {
	dir, _ := r.resolve(sourceRef{"GitRepository", namespace, name}, file, 0)
	return dir, dir != ""
}

// rootFor returns the lint root a file lies under ("" if none).
func (r *resolver) rootFor(file string) string {
	best := ""
	abs := pathkey.Real(file)
	for _, root := range r.roots {
		rr := pathkey.Real(root)
		if (abs == rr || strings.HasPrefix(abs, rr+string(filepath.Separator))) && len(rr) > len(pathkey.Real(best)) {
			best = root
		}
	}
	if best == "" && len(r.roots) == 1 {
		best = r.roots[0]
	}
	return best
}

// resolve returns the folder of a source as seen from a Kustomization
// written in file, or why it has none.
func (r *resolver) resolve(ref sourceRef, file string, depth int) (string, string) {
	for _, key := range []string{ref.String(), ref.namespace + "/" + ref.name} {
		if dir, ok := r.mapped[key]; ok {
			return dir, ""
		}
	}
	if r.repo.kind != "" && ref == r.repo {
		if root := r.rootFor(file); root != "" {
			return root, ""
		}
		return "", "no directory was named as input to stand for this repository"
	}
	if ref.kind == "ExternalArtifact" {
		if a, ok := r.artifacts[ref]; ok && depth < 8 {
			return r.resolveArtifact(a, file, depth)
		}
		return "", "no ArtifactGenerator in the input makes it"
	}
	switch ref.kind {
	case "GitRepository", "OCIRepository", "Bucket":
		return "", "not a folder kiln knows (it is not this repository, and flux.sources in .kiln.yaml does not map it)"
	}
	return "", "kind " + ref.kind + " is not a Flux source kiln reads"
}

// resolveArtifact returns the folder an artifact stands for when its
// copies are one folder of one source placed as they are there
// (`@repo/apps/base/**` to `@artifact/base/` and `@repo/apps/prod/**` to
// `@artifact/prod/`: the folder apps), else why not.
func (r *resolver) resolveArtifact(a artifact, file string, depth int) (string, string) {
	root := ""
	for _, c := range a.copies {
		alias, from, ok := strings.Cut(strings.TrimPrefix(c.from, "@"), "/")
		to, isArt := strings.CutPrefix(c.to, "@artifact/")
		if !ok || !isArt || !strings.HasSuffix(from, "/**") {
			return "", fmt.Sprintf("its copy from %q to %q is not a folder copied whole, which kiln reads", c.from, c.to)
		}
		src, ok := a.sources[alias]
		if !ok {
			return "", "its copy names source @" + alias + ", which it does not define"
		}
		dir, why := r.resolve(src, file, depth+1)
		if dir == "" {
			return "", "its source " + src.String() + " is " + why
		}
		from = strings.TrimSuffix(from, "/**")
		to = strings.Trim(to, "/")
		if to != "" && from != to && !strings.HasSuffix(from, "/"+to) {
			return "", fmt.Sprintf("its copy from %q to %q moves files, which kiln does not follow", c.from, c.to)
		}
		base := filepath.Join(dir, strings.TrimSuffix(strings.TrimSuffix(from, to), "/"))
		if root != "" && pathkey.Real(root) != pathkey.Real(base) {
			return "", "its copies come from different folders, which kiln does not merge"
		}
		root = base
	}
	if root == "" {
		return "", "it copies nothing"
	}
	return root, ""
}

// newResolver reads the sources of the input: ArtifactGenerators, and the
// Git sources (defined, or named by a Kustomization or ArtifactGenerator)
// of which one may be this repository: the only one flux.sources does not
// map, else the only one whose Kustomization builds the folder defining
// it, else flux bootstrap's flux-system/flux-system.
func newResolver(mapped map[string]string, roots []string, objs []*object, ks []*kustomization) *resolver {
	r := &resolver{mapped: mapped, roots: roots, artifacts: map[sourceRef]artifact{}}
	git := map[sourceRef]bool{}
	for _, o := range objs {
		switch {
		case o.group() == "source.toolkit.fluxcd.io" && o.kind() == "GitRepository":
			git[sourceRef{"GitRepository", o.namespace(), o.name()}] = true
		case o.group() == "fluxcd.controlplane.io" && o.kind() == "FluxInstance":
			if s := instanceSource(o); s.kind == "GitRepository" {
				git[s] = true
			}
		case o.group() == "source.extensions.fluxcd.io" && o.kind() == "ArtifactGenerator":
			for _, s := range r.addGenerator(o) {
				if s.kind == "GitRepository" {
					git[s] = true
				}
			}
		}
	}
	// A Git source the Kustomizations name counts though the input does
	// not define it (flux bootstrap's flux-system is made in the cluster).
	for _, k := range ks {
		if s := sourceOf(k.spec(), k.obj.namespace()); s.kind == "GitRepository" {
			git[s] = true
		}
	}
	var unmapped []sourceRef
	for s := range git {
		if _, ok := mapped[s.String()]; ok {
			continue
		}
		if _, ok := mapped[s.namespace+"/"+s.name]; ok {
			continue
		}
		unmapped = append(unmapped, s)
	}
	sort.Slice(unmapped, func(i, j int) bool { return unmapped[i].String() < unmapped[j].String() })
	switch {
	case len(unmapped) == 1:
		r.repo, r.repoBy = unmapped[0], "the one Git source in the input that flux.sources does not map"
	case len(unmapped) > 1:
		// The Git source whose Kustomization builds the folder that
		// defines it (flux bootstrap's flux-system) is this repository.
		var self []sourceRef
		for _, k := range ks {
			src := sourceOf(k.spec(), k.obj.namespace())
			if !slices.Contains(unmapped, src) || slices.Contains(self, src) {
				continue
			}
			root := r.rootFor(k.obj.pos.File)
			if root == "" {
				continue
			}
			dir := pathkey.Real(filepath.Join(root, str(k.spec(), "path")))
			if f := pathkey.Real(k.obj.pos.File); strings.HasPrefix(f, dir+string(filepath.Separator)) {
				self = append(self, src)
			}
		}
		bootstrap := sourceRef{"GitRepository", "flux-system", "flux-system"}
		switch {
		case len(self) == 1:
			r.repo, r.repoBy = self[0], "the one Git source of a Kustomization that builds its own folder (of "+plural(len(unmapped), "Git source")+" flux.sources does not map)"
		case slices.Contains(unmapped, bootstrap):
			r.repo, r.repoBy = bootstrap, "the source flux bootstrap syncs the repository with (of "+plural(len(unmapped), "Git source")+" flux.sources does not map)"
		}
	}
	return r
}

// addGenerator records the artifacts of an ArtifactGenerator
// (source.extensions.fluxcd.io): ExternalArtifacts in its namespace.
func (r *resolver) addGenerator(o *object) []sourceRef {
	spec, _ := o.content["spec"].(map[string]any)
	a := artifact{sources: map[string]sourceRef{}, pos: o.pos}
	srcs, _ := spec["sources"].([]any)
	for _, s := range srcs {
		m, _ := s.(map[string]any)
		ns := str(m, "namespace")
		if ns == "" {
			ns = o.namespace()
		}
		a.sources[str(m, "alias")] = sourceRef{kind: str(m, "kind"), namespace: ns, name: str(m, "name")}
	}
	arts, _ := spec["artifacts"].([]any)
	for _, x := range arts {
		m, _ := x.(map[string]any)
		one := artifact{sources: a.sources, pos: o.pos}
		copies, _ := m["copy"].([]any)
		for _, c := range copies {
			cm, _ := c.(map[string]any)
			one.copies = append(one.copies, copyOp{from: str(cm, "from"), to: str(cm, "to")})
		}
		r.artifacts[sourceRef{"ExternalArtifact", o.namespace(), str(m, "name")}] = one
	}
	var out []sourceRef
	for _, s := range a.sources {
		out = append(out, s)
	}
	return out
}

// instanceSource is the source a Flux Operator FluxInstance's spec.sync
// makes: its kind, named spec.sync.name (default flux-system) in the
// instance's namespace.
func instanceSource(o *object) sourceRef {
	spec, _ := o.content["spec"].(map[string]any)
	sync, _ := spec["sync"].(map[string]any)
	if sync == nil {
		return sourceRef{}
	}
	name := str(sync, "name")
	if name == "" {
		name = "flux-system"
	}
	kind := str(sync, "kind")
	if kind == "" {
		kind = "GitRepository"
	}
	return sourceRef{kind: kind, namespace: o.namespace(), name: name}
}

// instanceKustomization is the root Kustomization a FluxInstance's
// spec.sync makes: spec.sync.path of its source.
func instanceKustomization(o *object) *object {
	src := instanceSource(o)
	if src.kind == "" {
		return nil
	}
	spec, _ := o.content["spec"].(map[string]any)
	sync, _ := spec["sync"].(map[string]any)
	path := str(sync, "path")
	return &object{pos: o.pos, cluster: o.cluster, content: map[string]any{
		"apiVersion": "kustomize.toolkit.fluxcd.io/v1",
		"kind":       "Kustomization",
		"metadata":   map[string]any{"name": src.name, "namespace": src.namespace},
		"spec": map[string]any{
			"path":      path,
			"prune":     true,
			"sourceRef": map[string]any{"kind": src.kind, "name": src.name},
		},
	}}
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
