package flux

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	fluxkustomize "github.com/fluxcd/pkg/kustomize"
	"github.com/kilnhq/kiln/discover"
	"github.com/kilnhq/kiln/internal/pathkey"
	"github.com/kilnhq/kiln/manifest"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/kustomize/api/resource"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// ignoreAnnotation is kiln's suppression annotation (rules.IgnoreAnnotation):
// on a Kustomization it applies to what the Kustomization renders.
const ignoreAnnotation = "kiln.dev/ignore"

// ownerGroup is the label prefix kustomize-controller marks what it
// applies with (kustomize.toolkit.fluxcd.io/name and /namespace).
const ownerGroup = "kustomize.toolkit.fluxcd.io"

// result is one Kustomization built.
type result struct {
	dir   string
	vars  map[string]string
	built *discover.Built
	unit  *discover.Unit
	// notes are said once the build is kept (a tree's, not a probe's).
	notes   []error
	emitted bool
}

func (r *result) ok() bool {
	return r.built != nil && r.built.Source != nil && len(r.built.Source.Errs) == 0 && r.built.Remote == "" && r.built.Plugin == ""
}

// build builds one Kustomization with the variables the objects of its
// tree (treeObjs) and the input give it; nil when its source is not
// resolved (said once per source).
func (r *run) build(k *kustomization, treeObjs []*object) *result {
	spec := k.spec()
	src := sourceOf(spec, k.obj.namespace())
	root, why := r.res.resolve(src, k.obj.pos.File, 0)
	if root == "" {
		if r.unresolvedWhy == nil {
			r.unresolvedWhy = map[sourceRef]string{}
		}
		if _, ok := r.unresolvedPos[src]; !ok {
			r.unresolvedPos[src], r.unresolvedWhy[src] = k.obj.pos, why
		}
		r.unresolved[src] = append(r.unresolved[src], k.id())
		return nil
	}
	path := str(spec, "path")
	dir := filepath.Join(root, path)
	if rel, err := filepath.Rel(pathkey.Real(root), pathkey.Real(dir)); err != nil || strings.HasPrefix(rel, "..") {
		return r.failed(k, dir, fmt.Sprintf("spec.path %q is outside its source %s", path, src))
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return r.failed(k, dir, fmt.Sprintf("spec.path %q: no directory %s in its source %s", path, shown(dir), src))
	}
	vars, notes := r.variables(k, treeObjs)
	key := cacheKey(k.obj.content, dir, vars)
	if res, ok := r.cache[key]; ok {
		return res
	}
	res := &result{dir: dir, vars: vars, notes: notes}
	r.cache[key] = res
	return r.kustomize(res, k, key)
}

// kustomize builds a Kustomization in res.dir as the Flux CLI builds it,
// with the variables res holds; key is what its transform depends on.
func (r *run) kustomize(res *result, k *kustomization, key string) *result {
	dir, vars := res.dir, res.vars
	// As the Flux CLI builds: the typed object, back to unstructured.
	var typed kustomizev1.Kustomization
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(k.obj.content, &typed); err != nil {
		return r.fail(res, k, "cannot read this Kustomization: "+err.Error())
	}
	data, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&typed)
	if err != nil {
		return r.fail(res, k, "cannot read this Kustomization: "+err.Error())
	}
	gen := fluxkustomize.NewGeneratorWithIgnore("", "", unstructured.Unstructured{Object: data})
	kdata, kfile, _, err := gen.GenerateManifest(dir)
	if err != nil {
		return r.fail(res, k, "kustomize-controller cannot generate the kustomization of "+shown(dir)+": "+err.Error())
	}
	reportAt := kfile
	if _, err := os.Stat(kfile); err != nil {
		reportAt = k.obj.pos.File
	}
	missing := map[string]bool{}
	unitName := fmt.Sprintf("Kustomization %s (%s:%d)", k.id(), k.obj.pos.File, k.obj.pos.Line)
	res.built = r.in.Build(discover.BuildRequest{
		Dir: dir, Kustomization: kdata, KustomizationFile: kfile, ReportAt: reportAt,
		LoadAnywhere: true, Transform: transform(&typed, data, vars, missing), Unit: unitName,
		// The transform is the Kustomization's spec with its variables
		// (key); what it notes on the side is the variables it misses.
		TransformKey: key, Remember: func() bool { return len(missing) == 0 },
	})
	if len(missing) > 0 {
		names := make([]string, 0, len(missing))
		for n := range missing {
			names = append(names, "${"+n+"}")
		}
		sort.Strings(names)
		res.notes = append(res.notes, &manifest.Error{Pos: k.obj.pos, Msg: fmt.Sprintf("note: flux: Kustomization %s substitutes %s, which no postBuild variable kiln read sets and no default gives: kustomize-controller substitutes an empty string", k.id(), strings.Join(names, ", "))})
	}
	if _, err := os.Stat(kfile); err == nil {
		res.built.Read[pathkey.Real(kfile)] = true
	}
	return r.settle(res, k)
}

// settle says why a build built nothing (a remote base, a plugin), or
// makes its unit: its objects rendered by the Kustomization.
func (r *run) settle(res *result, k *kustomization) *result {
	switch {
	case res.built.Remote != "":
		res.notes = append(res.notes, &manifest.Error{Pos: res.built.RemotePos, Msg: "warning: flux: remote base " + res.built.Remote + " is not fetched (kiln works offline); Kustomization " + k.id() + " is not built"})
		return res
	case res.built.Plugin != "":
		res.notes = append(res.notes, &manifest.Error{Pos: k.obj.pos, Msg: "warning: flux: Kustomization " + k.id() + " needs a plugin or KRM function (" + res.built.Plugin + "), which kiln never runs; it is not built"})
		return res
	}
	annos, _ := meta(k.obj.content)["annotations"].(map[string]any)
	ignore := str(annos, ignoreAnnotation)
	for _, o := range res.built.Source.Objects {
		o.Via, o.ViaIgnore = "Kustomization "+k.id(), ignore
	}
	res.unit = &discover.Unit{Kind: UnitKind, Dir: shown(res.dir), Source: res.built.Source}
	res.unit.Source.Path = k.obj.pos.File
	return res
}

// failed is a Kustomization whose folder kiln cannot find: a warning at
// the Kustomization (the source may not be what kiln took it for), no unit.
func (r *run) failed(k *kustomization, dir, msg string) *result {
	return &result{dir: dir, notes: []error{&manifest.Error{Pos: k.obj.pos, Msg: "warning: flux: Kustomization " + k.id() + ": " + msg + "; it is not built"}}}
}

func (r *run) fail(res *result, k *kustomization, msg string) *result {
	src := &manifest.Source{Path: k.obj.pos.File, Errs: []error{&manifest.Error{Pos: k.obj.pos, Msg: "flux: Kustomization " + k.id() + ": " + msg}}}
	res.built = &discover.Built{Source: src, Read: map[string]bool{}}
	res.unit = &discover.Unit{Kind: UnitKind, Dir: shown(res.dir), Source: src}
	return res
}

// bareVar is a variable written without a default: ${NAME}.
var bareVar = regexp.MustCompile(`\$\{([_a-zA-Z][_a-zA-Z0-9]*)\}`)

// substituteDisabled reports an object that opts out of substitution
// (kustomize.toolkit.fluxcd.io/substitute: disabled, label or annotation).
func substituteDisabled(res *resource.Resource) bool {
	const key = ownerGroup + "/substitute"
	return res.GetLabels()[key] == fluxkustomize.DisabledValue || res.GetAnnotations()[key] == fluxkustomize.DisabledValue
}

// transform is what kustomize-controller does to each object a build
// outputs: postBuild substitution (SubstituteVariables, with the
// variables kiln resolved as postBuild.substitute under the
// Kustomization's own), its owner labels, then spec.commonMetadata.
func transform(k *kustomizev1.Kustomization, data map[string]any, vars map[string]string, missing map[string]bool) func(*resource.Resource) error {
	var subst unstructured.Unstructured
	if k.Spec.PostBuild != nil {
		subst = unstructured.Unstructured{Object: runtime.DeepCopyJSON(data)}
		merged := map[string]any{}
		for n, v := range vars {
			merged[n] = v
		}
		for n, v := range k.Spec.PostBuild.Substitute {
			merged[n] = v
		}
		_ = unstructured.SetNestedField(subst.Object, merged, "spec", "postBuild", "substitute")
		unstructured.RemoveNestedField(subst.Object, "spec", "postBuild", "substituteFrom")
	}
	always := k.GetSubstituteStrategy() == kustomizev1.SubstituteStrategyAlways
	merged, _, _ := unstructured.NestedMap(subst.Object, "spec", "postBuild", "substitute")
	return func(res *resource.Resource) error {
		if k.Spec.PostBuild != nil && (len(merged) > 0 || always) && !substituteDisabled(res) {
			if y, err := res.AsYAML(); err == nil {
				for _, m := range bareVar.FindAllSubmatch(y, -1) {
					if _, ok := merged[string(m[1])]; !ok {
						missing[string(m[1])] = true
					}
				}
			}
		}
		if k.Spec.PostBuild != nil {
			if _, err := fluxkustomize.SubstituteVariables(context.Background(), nil, subst, res,
				fluxkustomize.SubstituteWithDryRun(true), fluxkustomize.SubstituteWithAlways(always)); err != nil {
				return fmt.Errorf("flux: Kustomization %s/%s: var substitution failed for '%s': %w", k.Namespace, k.Name, res.GetName(), err)
			}
		}
		if err := res.PipeE(yaml.SetLabel(ownerGroup+"/name", k.Name)); err != nil {
			return err
		}
		if err := res.PipeE(yaml.SetLabel(ownerGroup+"/namespace", k.Namespace)); err != nil {
			return err
		}
		if m := k.Spec.CommonMetadata; m != nil {
			if len(m.Labels) > 0 {
				labels := res.GetLabels()
				for n, v := range m.Labels {
					labels[n] = v
				}
				if err := res.SetLabels(labels); err != nil {
					return err
				}
			}
			if len(m.Annotations) > 0 {
				annos := res.GetAnnotations()
				for n, v := range m.Annotations {
					annos[n] = v
				}
				if err := res.SetAnnotations(annos); err != nil {
					return err
				}
			}
		}
		return nil
	}
}
