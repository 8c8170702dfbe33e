package argocd

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/kilnhq/kiln/internal/yamlnode"
	"github.com/kilnhq/kiln/manifest"
	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// builtinKinds is the table of built-in kinds, built on first use.
var builtinKinds = sync.OnceValue(manifest.BuiltinKinds)

// namespaced reports whether apiVersion/kind is a namespaced built-in
// kind. A custom resource's scope is not known here: Argo CD asks the
// cluster, kiln leaves it as rendered.
func namespaced(apiVersion, kind string) bool {
	gv, err := k8sschema.ParseGroupVersion(apiVersion)
	if err != nil {
		return false
	}
	r, ok := builtinKinds().Lookup(gv.WithKind(kind))
	return ok && r.Namespaced && !r.CRD
}

// setNamespace puts the destination namespace on a namespaced object
// that names none, as Argo CD applies it (kubectl apply -n): Pod Security
// and duplicates are judged in the namespace it lands in.
func setNamespace(n *yaml.Node, ns string) {
	if ns == "" || n == nil || n.Kind != yaml.MappingNode {
		return
	}
	if !namespaced(yamlnode.Scalar(yamlnode.Value(n, "apiVersion")), yamlnode.Scalar(yamlnode.Value(n, "kind"))) {
		return
	}
	md := yamlnode.Value(n, "metadata")
	if md == nil || md.Kind != yaml.MappingNode || yamlnode.Scalar(yamlnode.Value(md, "namespace")) != "" {
		return
	}
	if v := yamlnode.Value(md, "namespace"); v != nil {
		v.Value, v.Tag = ns, "!!str"
		return
	}
	md.Content = append(md.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: "namespace"}, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: ns})
}

// managedNamespace is the Namespace Argo CD creates for an Application
// with CreateNamespace=true and managedNamespaceMetadata, placed at the
// metadata, when the input does not declare it: Pod Security is judged
// with its labels.
func (r *run) managedNamespace(a *app, unit string) []*manifest.Object {
	sp := a.spec.Spec.SyncPolicy
	ns := a.spec.Spec.Destination.Namespace
	if sp == nil || sp.ManagedNamespaceMetadata == nil || ns == "" || r.namespaces[ns] || r.created[ns] {
		return nil
	}
	if !slices.ContainsFunc(sp.SyncOptions, func(o string) bool { return strings.EqualFold(strings.ReplaceAll(o, " ", ""), "CreateNamespace=true") }) {
		return nil
	}
	at := yamlnode.Value(yamlnode.Value(yamlnode.Value(a.obj.Node(), "spec"), "syncPolicy"), "managedNamespaceMetadata")
	pos := a.obj.Pos()
	if at != nil {
		pos.Line, pos.Column = at.Line, at.Column
	}
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: %q\n", ns)
	for _, f := range []struct {
		name string
		m    map[string]string
	}{{"labels", sp.ManagedNamespaceMetadata.Labels}, {"annotations", sp.ManagedNamespaceMetadata.Annotations}} {
		if len(f.m) == 0 {
			continue
		}
		fmt.Fprintf(&b, "  %s:\n", f.name)
		keys := make([]string, 0, len(f.m))
		for k := range f.m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, "    %q: %q\n", k, f.m[k])
		}
	}
	objs, errs := manifest.ParseRendered(a.obj.File, []byte(b.String()))
	if len(errs) > 0 || len(objs) != 1 {
		return nil
	}
	n := objs[0].Node()
	placeAll(n, pos)
	o, err := manifest.NewRenderedObject(a.obj.File, unit, 0, n)
	if err != nil {
		return nil
	}
	o.Via, o.ViaIgnore = "Application "+a.name(), a.obj.Annotations[ignoreAnnotation]
	r.created[ns] = true
	return []*manifest.Object{o}
}

// placeAll puts every node of n at pos.
func placeAll(n *yaml.Node, pos manifest.Position) {
	n.Line, n.Column = pos.Line, pos.Column
	for _, c := range n.Content {
		placeAll(c, pos)
	}
}
