package session

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/kilnhq/kiln/compiler"
	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Generated is what an Argo CD generate made.
type Generated struct {
	// Findings are the lint's findings on what was generated.
	Findings *rules.Result
	// Stream is the YAML stream to apply; empty when Findings fail the run.
	Stream []byte
}

// Generate is kiln argocd generate: it builds the App specs and passes
// through the plain manifests of an app directory (what kiln lint would
// read, less hidden files and kustomization files), gives the objects
// without a namespace the run's (Settings.Namespace), and judges them.
// With syncWaves the compiled objects carry Argo CD sync waves.
func (s *Session) Generate(dir string, syncWaves bool) (*Generated, error) {
	files, errs := appFiles(dir)
	if err := inputErrors(errs); err != nil {
		return nil, err
	}
	set := s.readFiles(files)
	objs := set.Objects()
	if err := defaultNamespace(objs, s.Settings.Namespace); err != nil {
		return nil, err
	}
	x := compiler.Expand(objs)
	if syncWaves {
		if err := x.AddSyncWaves(); err != nil {
			return nil, inputErrors([]error{err})
		}
	}
	if err := inputErrors(append(set.Errors(), x.Errors...)); err != nil {
		return nil, err
	}
	if err := defaultNamespace(x.All, s.Settings.Namespace); err != nil {
		return nil, err
	}
	res, err := s.Judge(x.All, fileObjects(set))
	if err != nil {
		return nil, err
	}
	g := &Generated{Findings: res}
	if s.Fails(res) {
		return g, nil
	}
	var out bytes.Buffer
	if err := manifest.Write(&out, x.All); err != nil {
		return nil, err
	}
	g.Stream = out.Bytes()
	return g, nil
}

// appFiles lists the manifests of an app directory: what kiln lint would
// read, less hidden files (.kiln.yaml, CI files) and kustomization files.
func appFiles(dir string) ([]string, []error) {
	all, errs := manifest.Expand([]string{dir})
	var files []string
	for _, f := range all {
		base := filepath.Base(f)
		switch {
		case strings.HasPrefix(base, "."):
		case base == "kustomization.yaml" || base == "kustomization.yml" || base == "Kustomization":
		default:
			files = append(files, f)
		}
	}
	if len(files) == 0 && len(errs) == 0 {
		errs = append(errs, &manifest.Error{Pos: manifest.Position{File: dir}, Msg: "no manifests or App specs to generate from"})
	}
	return files, errs
}

// defaultNamespace sets metadata.namespace on namespaced objects (and App
// specs) that have none. It runs before anything reads the objects' content.
func defaultNamespace(objs []*manifest.Object, ns string) error {
	if ns == "" {
		return nil
	}
	for _, o := range objs {
		if o.Namespace != "" || clusterScoped(o) {
			continue
		}
		if err := yaml.NewRNode(o.Node()).SetNamespace(ns); err != nil {
			return fmt.Errorf("%s: setting the namespace: %w", o.Pos(), err)
		}
		o.Namespace = ns
	}
	return nil
}

// clusterScoped reports whether an object takes no namespace: a built-in
// cluster-scoped kind, or any kind named Cluster* (ClusterIssuer, ClusterPolicy…).
func clusterScoped(o *manifest.Object) bool {
	return manifest.BuiltinClusterScoped(schema.GroupKind{Group: o.Group(), Kind: o.Kind}) || strings.HasPrefix(o.Kind, "Cluster")
}
