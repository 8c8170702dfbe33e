package admit

import (
	"maps"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kilnhq/kiln/manifest"
)

// NamespaceOf returns a Namespace object as the typed Namespace of its
// content (the admitted content, once it was admitted), or nil if its
// content is gone. Content the type cannot hold gives a Namespace with only
// the object's name and labels.
func NamespaceOf(o *manifest.Object) *corev1.Namespace {
	content, err := o.Content()
	if err != nil {
		return nil
	}
	ns := &corev1.Namespace{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(content, ns); err != nil {
		ns = &corev1.Namespace{}
		ns.Name = o.Name
		ns.Labels = maps.Clone(o.Labels)
	}
	return ns
}

// IsNamespace reports whether the object is a core v1 Namespace with a name.
func IsNamespace(o *manifest.Object) bool {
	return o.Kind == "Namespace" && o.APIVersion == "v1" && o.Name != ""
}

// Namespaces are the admitted Namespaces of context objects read ahead
// (manifest.Object.ReadAhead), whose content went as soon as they were
// admitted: a Namespace costs a few KB as content, and a large repository
// holds thousands. The values are shared; callers must not change them.
type Namespaces map[*manifest.Object]*corev1.Namespace

// KeptNamespaces returns the Namespaces among objs whose content went once
// admitted, as admission kept them (manifest.Admission.Kept); nil when
// there are none.
func KeptNamespaces(objs []*manifest.Object) Namespaces {
	var out Namespaces
	for _, o := range objs {
		if o.Admission == nil {
			continue
		}
		if ns, ok := o.Admission.Kept.(*corev1.Namespace); ok {
			if out == nil {
				out = Namespaces{}
			}
			out[o] = ns
		}
	}
	return out
}
