package discover

import (
	"fmt"

	"github.com/kilnhq/kiln/manifest"
	"sigs.k8s.io/kustomize/api/krusty"
	kustypes "sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/kustomize/kyaml/yaml"
	sigsyaml "sigs.k8s.io/yaml"
)

// kustomizePostRenderer is a HelmRelease's postRenderers[].kustomize.
type kustomizePostRenderer struct {
	Patches []kustypes.Patch `json:"patches"`
	Images  []kustypes.Image `json:"images"`
}

func postRenderers(hr *helmRelease) []*kustomizePostRenderer {
	var out []*kustomizePostRenderer
	for _, p := range hr.Spec.PostRenderers {
		if p.Kustomize != nil {
			out = append(out, p.Kustomize)
		}
	}
	return out
}

// applyPostRenderers runs a release's kustomize post-renderers in order
// over its template objects as helm-controller does (each a kustomization
// in memory whose one resource is the chart's output, with the patches
// and images), then edit (the origin labels). What a patch changed has no
// line of its own: the objects are placed at the HelmRelease.
func applyPostRenderers(objs []*manifest.Object, prs []*kustomizePostRenderer, hr *manifest.Object, unit string, edit []func(*yaml.Node)) ([]*manifest.Object, error) {
	stream, err := toYAML(objs)
	if err != nil {
		return nil, err
	}
	for _, pr := range prs {
		fs := filesys.MakeFsInMemory()
		const input = "helm-output.yaml"
		if err := fs.WriteFile(input, stream); err != nil {
			return nil, err
		}
		k := kustypes.Kustomization{TypeMeta: kustypes.TypeMeta{APIVersion: kustypes.KustomizationVersion, Kind: kustypes.KustomizationKind},
			Resources: []string{input}, Patches: pr.Patches, Images: pr.Images}
		data, err := sigsyaml.Marshal(k)
		if err != nil {
			return nil, err
		}
		if err := fs.WriteFile("kustomization.yaml", data); err != nil {
			return nil, err
		}
		opts := krusty.MakeDefaultOptions()
		opts.LoadRestrictions = kustypes.LoadRestrictionsNone
		m, err := krusty.MakeKustomizer(opts).Run(fs, ".")
		if err != nil {
			return nil, err
		}
		if stream, err = m.AsYaml(); err != nil {
			return nil, err
		}
	}
	nodes, errs := manifest.ParseRendered(hr.File, stream)
	if len(errs) > 0 {
		return nil, fmt.Errorf("%v", errs[0])
	}
	var out []*manifest.Object
	pos := hr.Pos()
	for i, o := range nodes {
		n := o.Node()
		clearPositions(n, nil)
		for _, e := range edit {
			e(n)
		}
		n.Line, n.Column = pos.Line, pos.Column
		fillPositions(n, nil)
		ro, err := manifest.NewRenderedObject(hr.File, unit, i, n)
		if err != nil {
			return nil, err
		}
		out = append(out, ro)
	}
	return out, nil
}
