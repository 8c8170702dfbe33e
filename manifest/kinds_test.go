package manifest

import (
	"reflect"
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
)

// TestBuiltinKindsCoverScheme checks the table against the kinds client-go
// registers for k8s.io/api v0.37.2: every kind that has a List kind (a
// resource) is in the table, and every table entry from k8s.io/api is
// registered there.
func TestBuiltinKindsCoverScheme(t *testing.T) {
	k := BuiltinKinds()
	known := scheme.Scheme.AllKnownTypes()
	// Kinds with a List that are not top-level resources, or are served as subresources only.
	notResources := map[string]bool{"Scale": true, "Binding": true, "Eviction": true, "TokenRequest": true, "ImageReview": true, "RangeAllocation": true, "APIGroup": true}
	var missing []string
	for gvk := range known {
		if gvk.Version == "__internal" || strings.HasSuffix(gvk.Kind, "List") || notResources[gvk.Kind] {
			continue
		}
		if _, hasList := known[gvk.GroupVersion().WithKind(gvk.Kind+"List")]; !hasList {
			continue
		}
		if _, ok := k.Lookup(gvk); !ok {
			missing = append(missing, gvk.String())
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("kinds registered by client-go but not in the table:\n%s", strings.Join(missing, "\n"))
	}
	var extra []string
	for _, r := range k.All() {
		switch r.GVK.Group {
		case "apiextensions.k8s.io", "apiregistration.k8s.io":
			continue // not in k8s.io/api
		}
		if r.CRD {
			continue // knownCRDs
		}
		if _, ok := known[r.GVK]; !ok {
			extra = append(extra, r.GVK.String())
		}
	}
	if len(extra) > 0 {
		t.Errorf("table entries client-go does not register:\n%s", strings.Join(extra, "\n"))
	}
}

func TestBuiltinLookup(t *testing.T) {
	k := BuiltinKinds()
	tests := []struct {
		apiVersion, kind string
		resource         string
		namespaced       bool
		sub              string
	}{
		{"apps/v1", "Deployment", "deployments", true, "scale"},
		{"v1", "Pod", "pods", true, "exec"},
		{"v1", "Namespace", "namespaces", false, "finalize"},
		{"v1", "Endpoints", "endpoints", true, ""},
		{"networking.k8s.io/v1", "NetworkPolicy", "networkpolicies", true, ""},
		{"networking.k8s.io/v1", "IngressClass", "ingressclasses", false, ""},
		{"storage.k8s.io/v1", "StorageClass", "storageclasses", false, ""},
		{"rbac.authorization.k8s.io/v1", "ClusterRole", "clusterroles", false, ""},
		{"admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy", "validatingadmissionpolicies", false, "status"},
		{"apiextensions.k8s.io/v1", "CustomResourceDefinition", "customresourcedefinitions", false, "status"},
		{"batch/v1", "CronJob", "cronjobs", true, "status"},
		{"v1", "ServiceAccount", "serviceaccounts", true, "token"},
		{"jobset.x-k8s.io/v1alpha2", "JobSet", "jobsets", true, "status"},
	}
	for _, tt := range tests {
		gvk := schema.FromAPIVersionAndKind(tt.apiVersion, tt.kind)
		r, ok := k.Lookup(gvk)
		if !ok {
			t.Errorf("%s: not in the table", gvk)
			continue
		}
		if r.GVR.Resource != tt.resource || r.Namespaced != tt.namespaced || r.GVR.GroupVersion() != gvk.GroupVersion() {
			t.Errorf("%s: got %s namespaced=%v, want %s namespaced=%v", gvk, r.GVR, r.Namespaced, tt.resource, tt.namespaced)
		}
		if tt.sub != "" && !containsString(r.Subresources, tt.sub) {
			t.Errorf("%s: subresources %v lack %q", gvk, r.Subresources, tt.sub)
		}
		back, ok := k.KindFor(r.GVR)
		if !ok || back != gvk {
			t.Errorf("KindFor(%s) = %s, %v; want %s", r.GVR, back, ok, gvk)
		}
	}
}

func containsString(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

func TestGuessResource(t *testing.T) {
	for kind, want := range map[string]string{
		"Widget": "widgets", "Policy": "policies", "Ingress": "ingresses", "Gateway": "gateways",
		"Box": "boxes", "Match": "matches", "Mesh": "meshes", "Endpoints": "endpoints", "": "",
	} {
		if got := GuessResource(kind); got != want {
			t.Errorf("GuessResource(%q) = %q, want %q", kind, got, want)
		}
	}
	r := BuiltinKinds().ResourceFor(schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Policy"})
	if !r.Guessed || r.GVR.Resource != "policies" || !r.Namespaced {
		t.Errorf("ResourceFor(unknown) = %+v, want a namespaced guess \"policies\"", r)
	}
}

func TestAddCRDs(t *testing.T) {
	objs, errs := Parse("crds.yaml", []byte(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  names: {kind: Widget, plural: widgets}
  scope: Cluster
  versions:
  - {name: v1, served: true, storage: true, subresources: {status: {}, scale: {}}}
  - {name: v2, served: true}
  - {name: v0, served: false}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: broken.example.com}
spec:
  group: example.com
---
apiVersion: apiextensions.k8s.io/v1beta1
kind: CustomResourceDefinition
metadata: {name: gadgets.example.com}
spec:
  group: example.com
  version: v1beta1
  names: {kind: Gadget, plural: gadgets}
`))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	k := BuiltinKinds()
	errs = k.AddCRDs(objs)
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "crds.yaml:16:") || !strings.Contains(errs[0].Error(), `"broken.example.com" needs spec.group, spec.names.kind and spec.names.plural`) {
		t.Errorf("errors = %v, want one for broken.example.com at line 16", errs)
	}
	v1, ok := k.Lookup(schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"})
	if !ok || v1.GVR.Resource != "widgets" || v1.Namespaced || !v1.CRD || !reflect.DeepEqual(v1.Subresources, []string{"scale", "status"}) {
		t.Errorf("Widget v1 = %+v", v1)
	}
	if _, ok := k.Lookup(schema.GroupVersionKind{Group: "example.com", Version: "v2", Kind: "Widget"}); !ok {
		t.Error("Widget v2 (served) missing")
	}
	if _, ok := k.Lookup(schema.GroupVersionKind{Group: "example.com", Version: "v0", Kind: "Widget"}); ok {
		t.Error("Widget v0 (not served) present")
	}
	if g, ok := k.Lookup(schema.GroupVersionKind{Group: "example.com", Version: "v1beta1", Kind: "Gadget"}); !ok || !g.Namespaced {
		t.Errorf("Gadget v1beta1 = %+v, %v; want namespaced", g, ok)
	}
	got := k.Equivalents(schema.GroupVersionResource{Group: "example.com", Version: "v2", Resource: "widgets"})
	want := []schema.GroupVersionResource{{Group: "example.com", Version: "v1", Resource: "widgets"}, {Group: "example.com", Version: "v2", Resource: "widgets"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Equivalents(widgets v2) = %v, want %v", got, want)
	}
	// The built-in table is not changed by adding CRDs to a copy.
	if _, ok := BuiltinKinds().Lookup(schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}); ok {
		t.Error("AddCRDs leaked into BuiltinKinds")
	}
}

func TestEquivalentsAcrossGroups(t *testing.T) {
	k := BuiltinKinds()
	str := func(rs []schema.GroupVersionResource) string {
		var s []string
		for _, r := range rs {
			s = append(s, r.String())
		}
		return strings.Join(s, " ")
	}
	tests := []struct {
		in   schema.GroupVersionResource
		want string
	}{
		// apps/v1beta1, apps/v1beta2 and extensions/v1beta1 are no longer served.
		{schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, "apps/v1, Resource=deployments"},
		{schema.GroupVersionResource{Group: "extensions", Version: "v1beta1", Resource: "deployments"}, "apps/v1, Resource=deployments extensions/v1beta1, Resource=deployments"},
		{schema.GroupVersionResource{Group: "", Version: "v1", Resource: "events"}, "/v1, Resource=events events.k8s.io/v1, Resource=events"},
		{schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "unknowns"}, "example.com/v1, Resource=unknowns"},
	}
	for _, tt := range tests {
		if got := str(k.Equivalents(tt.in)); got != tt.want {
			t.Errorf("Equivalents(%s) = %s, want %s", tt.in, got, tt.want)
		}
	}
}
