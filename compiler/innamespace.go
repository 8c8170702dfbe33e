package compiler

import (
	"fmt"
	"strings"

	"github.com/kilnhq/kiln/manifest"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// ExpandIn is Expand for objects deployed into namespace ns (Argo CD's
// application namespace, kubectl's -n): the objects and App specs without a
// namespace get ns before the specs compile, and the compiled objects
// without one get it after. The error is one setting a namespace met; the
// specs' problems are in the Expansion's Errors. An empty ns is Expand.
func ExpandIn(objs []*manifest.Object, ns string) (Expansion, error) {
	if err := defaultNamespace(objs, ns); err != nil {
		return Expansion{}, err
	}
	x := Expand(objs)
	if err := defaultNamespace(x.All, ns); err != nil {
		return Expansion{}, err
	}
	return x, nil
}

// defaultNamespace sets metadata.namespace on the objects (and App specs)
// that have none and are not cluster-scoped: in their YAML and in their
// decoded content.
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
		// The content was decoded when the file was read: give it the
		// namespace too (a copy: decoded content may be shared).
		if c, err := o.Content(); err == nil {
			md, _ := c["metadata"].(map[string]any)
			nmd := make(map[string]any, len(md)+1)
			for k, v := range md {
				nmd[k] = v
			}
			nmd["namespace"] = ns
			nc := make(map[string]any, len(c))
			for k, v := range c {
				nc[k] = v
			}
			nc["metadata"] = nmd
			o.SetContent(nc)
		}
	}
	return nil
}

// clusterScoped reports whether an object takes no namespace: a built-in
// cluster-scoped kind, or any kind named Cluster* (ClusterIssuer,
// ClusterPolicy…).
func clusterScoped(o *manifest.Object) bool {
	return manifest.BuiltinClusterScoped(schema.GroupKind{Group: o.Group(), Kind: o.Kind}) || strings.HasPrefix(o.Kind, "Cluster")
}
