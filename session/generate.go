package session

import (
	"bytes"
	"fmt"
	"io"
	"strings"

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
	// refused is set when Findings fail the run.
	refused bool
}

// Deliver writes the stream to w, or, when the findings fail the run,
// nothing: a Refused error.
func (g *Generated) Deliver(w io.Writer) error {
	if g.refused {
		return &Refused{Msg: "lint findings at the fail-on level; nothing generated"}
	}
	_, err := w.Write(g.Stream)
	return err
}

// Generate is kiln argocd generate: it builds the App specs and passes
// through the plain manifests of an app directory (the run's input step
// with nothing rendered: hidden files and kustomization files are not
// read), the objects without a namespace given the run's
// (Settings.Namespace), and judges them.
// With syncWaves the compiled objects carry Argo CD sync waves.
func (s *Session) Generate(dir string, syncWaves bool) (*Generated, error) {
	in, err := s.read([]string{dir}, readOptions{plain: true})
	if err != nil {
		return nil, err
	}
	x := in.x
	if syncWaves {
		if err := x.AddSyncWaves(); err != nil {
			return nil, inputErrors([]error{err})
		}
	}
	errs := in.errs()
	if len(in.found.Files) == 0 && len(errs) == 0 {
		errs = append(errs, &manifest.Error{Pos: manifest.Position{File: dir}, Msg: "no manifests or App specs to generate from"})
	}
	if err := inputErrors(errs); err != nil {
		return nil, err
	}
	res, err := s.Judge(x.All, in.listed())
	if err != nil {
		return nil, err
	}
	g := &Generated{Findings: res, refused: s.Fails(res)}
	if g.refused {
		return g, nil
	}
	var out bytes.Buffer
	if err := manifest.Write(&out, x.All); err != nil {
		return nil, err
	}
	g.Stream = out.Bytes()
	return g, nil
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
