package manifest

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Resource says how the API server serves one kind at one version: the
// resource name a request carries (GroupVersionResource), whether objects
// live in a namespace, and the subresources requests may name.
type Resource struct {
	GVK          schema.GroupVersionKind
	GVR          schema.GroupVersionResource
	Namespaced   bool
	Subresources []string
	// Guessed is set when the kind is in no table and the resource name is
	// GuessResource's lowercase plural (and the scope a guess: namespaced).
	Guessed bool
	// CRD is set for kinds added from a CustomResourceDefinition.
	CRD bool
}

// Kinds is a kind ↔ resource table: the built-in kinds (BuiltinKinds) plus
// custom resources added from CRDs. It is safe for concurrent reads once
// built; Add and AddCRDs are not safe to run concurrently with reads.
type Kinds struct {
	byGVK map[schema.GroupVersionKind]*Resource
	byGVR map[schema.GroupVersionResource]*Resource
}

// NewKinds returns an empty table.
func NewKinds() *Kinds {
	return &Kinds{byGVK: map[schema.GroupVersionKind]*Resource{}, byGVR: map[schema.GroupVersionResource]*Resource{}}
}

var (
	builtinOnce sync.Once
	builtin     *Kinds
)

// BuiltinKinds returns a fresh table holding every built-in kind and version
// of Kubernetes 1.37 (k8s.io/api v0.37.2), and the custom kinds kiln itself
// compiles (knownCRDs). Callers may add CRDs to it.
func BuiltinKinds() *Kinds {
	builtinOnce.Do(func() {
		builtin = NewKinds()
		for _, b := range builtinResources {
			builtin.Add(Resource{
				GVK:          schema.GroupVersionKind{Group: b.group, Version: b.version, Kind: b.kind},
				GVR:          schema.GroupVersionResource{Group: b.group, Version: b.version, Resource: b.resource},
				Namespaced:   b.namespaced,
				Subresources: b.subresources,
			})
		}
		for _, r := range knownCRDs {
			builtin.Add(r)
		}
	})
	k := NewKinds()
	for gvk, r := range builtin.byGVK {
		k.byGVK[gvk] = r
	}
	for gvr, r := range builtin.byGVR {
		k.byGVR[gvr] = r
	}
	return k
}

var (
	clusterScopedOnce sync.Once
	clusterScoped     map[schema.GroupKind]bool
)

// BuiltinClusterScoped reports whether a built-in kind (at any version
// Kubernetes 1.37 serves) takes no namespace.
func BuiltinClusterScoped(gk schema.GroupKind) bool {
	clusterScopedOnce.Do(func() {
		clusterScoped = map[schema.GroupKind]bool{}
		for _, b := range builtinResources {
			if !b.namespaced {
				clusterScoped[schema.GroupKind{Group: b.group, Kind: b.kind}] = true
			}
		}
	})
	return clusterScoped[gk]
}

// Add puts one kind at one version in the table, replacing what was there.
func (k *Kinds) Add(r Resource) {
	if old := k.byGVK[r.GVK]; old != nil {
		delete(k.byGVR, old.GVR)
	}
	rr := r
	k.byGVK[r.GVK] = &rr
	k.byGVR[r.GVR] = &rr
}

// Lookup returns the resource serving a kind at a version.
func (k *Kinds) Lookup(gvk schema.GroupVersionKind) (Resource, bool) {
	if r := k.byGVK[gvk]; r != nil {
		return *r, true
	}
	return Resource{}, false
}

// ResourceFor returns what serves a kind: the table's entry, else a guess
// (see GuessResource) with Guessed set.
func (k *Kinds) ResourceFor(gvk schema.GroupVersionKind) Resource {
	if r, ok := k.Lookup(gvk); ok {
		return r
	}
	return Resource{
		GVK:        gvk,
		GVR:        gvk.GroupVersion().WithResource(GuessResource(gvk.Kind)),
		Namespaced: true,
		Guessed:    true,
	}
}

// KindFor returns the kind a resource serves.
func (k *Kinds) KindFor(gvr schema.GroupVersionResource) (schema.GroupVersionKind, bool) {
	if r := k.byGVR[gvr]; r != nil {
		return r.GVK, true
	}
	return schema.GroupVersionKind{}, false
}

// Equivalents returns every served resource that stores the same objects
// as gvr (the resource itself included): the same group and resource at
// every version, plus the built-in resources served by two groups
// (extensions/apps, extensions/networking.k8s.io, core/events.k8s.io).
// Built-in alpha and beta versions count as not served: Kubernetes 1.37
// serves none by default (betas introduced since 1.24 are off by default,
// older ones have been removed), as the API server's equivalent-resource
// registry knows only what it serves. Every served CRD version counts.
// The result is sorted by group, version and resource.
func (k *Kinds) Equivalents(gvr schema.GroupVersionResource) []schema.GroupVersionResource {
	groups := []string{gvr.Group}
	for _, eq := range equivalentGroups {
		if eq.resource == gvr.Resource && (eq.a == gvr.Group || eq.b == gvr.Group) {
			groups = []string{eq.a, eq.b}
		}
	}
	var out []schema.GroupVersionResource
	for r, res := range k.byGVR {
		if r.Resource != gvr.Resource || (r != gvr && !res.CRD && prerelease(r.Version)) {
			continue
		}
		for _, g := range groups {
			if r.Group == g {
				out = append(out, r)
			}
		}
	}
	if len(out) == 0 {
		out = append(out, gvr)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// prerelease reports whether an API version is an alpha or beta ("v1beta2").
func prerelease(version string) bool {
	return strings.Contains(version, "alpha") || strings.Contains(version, "beta")
}

// equivalentGroups lists built-in resources that two API groups serve from
// the same storage (as the API server's EquivalentResourceRegistry knows them).
var equivalentGroups = []struct{ resource, a, b string }{
	{"deployments", "apps", "extensions"},
	{"daemonsets", "apps", "extensions"},
	{"replicasets", "apps", "extensions"},
	{"ingresses", "networking.k8s.io", "extensions"},
	{"networkpolicies", "networking.k8s.io", "extensions"},
	{"events", "", "events.k8s.io"},
}

// All returns every entry sorted by group, version and kind.
func (k *Kinds) All() []Resource {
	out := make([]Resource, 0, len(k.byGVK))
	for _, r := range k.byGVK {
		out = append(out, *r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].GVK.String() < out[j].GVK.String() })
	return out
}

// GuessResource guesses the resource name of a kind that no table knows, the
// way client tools do when discovery is not available: the lowercase kind,
// pluralised by English rules ("Policy" → "policies", "Ingress" →
// "ingresses", "Widget" → "widgets"). It is only a guess: a CRD's
// spec.names.plural may say otherwise.
func GuessResource(kind string) string {
	l := strings.ToLower(kind)
	switch {
	case l == "":
		return ""
	case l == "endpoints":
		return l
	case strings.HasSuffix(l, "s"), strings.HasSuffix(l, "x"), strings.HasSuffix(l, "z"),
		strings.HasSuffix(l, "ch"), strings.HasSuffix(l, "sh"):
		return l + "es"
	case strings.HasSuffix(l, "y") && len(l) > 1 && !strings.ContainsRune("aeiou", rune(l[len(l)-2])):
		return l[:len(l)-1] + "ies"
	}
	return l + "s"
}

// AddCRDs adds the kinds that CustomResourceDefinitions among objs define
// (apiextensions.k8s.io/v1 and v1beta1), one entry per served version, and
// returns the problems found in CRDs it could not read.
func (k *Kinds) AddCRDs(objs []*Object) []error {
	var errs []error
	for _, o := range objs {
		if o.Kind != "CustomResourceDefinition" || o.Group() != "apiextensions.k8s.io" {
			continue
		}
		if err := k.addCRD(o); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

func (k *Kinds) addCRD(o *Object) error {
	c, err := o.Content()
	if err != nil {
		return err
	}
	spec, _ := c["spec"].(map[string]any)
	names, _ := spec["names"].(map[string]any)
	group, _ := spec["group"].(string)
	kind, _ := names["kind"].(string)
	plural, _ := names["plural"].(string)
	scope, _ := spec["scope"].(string)
	if group == "" || kind == "" || plural == "" {
		return &Error{Pos: o.Locate("spec"), Msg: fmt.Sprintf("CustomResourceDefinition %q needs spec.group, spec.names.kind and spec.names.plural", o.Name)}
	}
	type ver struct {
		name string
		subs []string
	}
	var vers []ver
	topSubs := subresourceNames(spec["subresources"])
	if list, ok := spec["versions"].([]any); ok {
		for _, it := range list {
			v, _ := it.(map[string]any)
			name, _ := v["name"].(string)
			if served, ok := v["served"].(bool); name == "" || (ok && !served) {
				continue
			}
			subs := subresourceNames(v["subresources"])
			if subs == nil {
				subs = topSubs
			}
			vers = append(vers, ver{name, subs})
		}
	}
	if v, ok := spec["version"].(string); ok && v != "" && len(vers) == 0 { // v1beta1's single version
		vers = append(vers, ver{v, topSubs})
	}
	if len(vers) == 0 {
		return &Error{Pos: o.Locate("spec.versions"), Msg: fmt.Sprintf("CustomResourceDefinition %q serves no version", o.Name)}
	}
	for _, v := range vers {
		k.Add(Resource{
			GVK:          schema.GroupVersionKind{Group: group, Version: v.name, Kind: kind},
			GVR:          schema.GroupVersionResource{Group: group, Version: v.name, Resource: plural},
			Namespaced:   scope != "Cluster",
			Subresources: v.subs,
			CRD:          true,
		})
	}
	return nil
}

func subresourceNames(v any) []string {
	m, _ := v.(map[string]any)
	return slices.Sorted(maps.Keys(m))
}

// knownCRDs are the custom resources kiln compiles to, as their
// CustomResourceDefinitions serve them, so that policies match them by
// their real resource without the CRD in the input: JobSet v1alpha2
// (sigs.k8s.io/jobset, resource jobsets, namespaced, status subresource).
var knownCRDs = []Resource{{
	GVK:          schema.GroupVersionKind{Group: "jobset.x-k8s.io", Version: "v1alpha2", Kind: "JobSet"},
	GVR:          schema.GroupVersionResource{Group: "jobset.x-k8s.io", Version: "v1alpha2", Resource: "jobsets"},
	Namespaced:   true,
	Subresources: []string{"status"},
	CRD:          true,
}}

// builtinResources is every kind served by Kubernetes 1.37, generated from
// the `+genclient` markers on the types in k8s.io/api v0.37.2 (kinds without
// verbs skipped; `+genclient:nonNamespaced` → cluster-scoped; subresources
// from `subresource=` markers, "status" for types with a status, plus the
// pods/nodes/services/namespaces subresources the server adds by hand).
// Resource names are the lowercase plurals client-gen uses. The
// apiextensions.k8s.io and apiregistration.k8s.io kinds (served by the
// kube-apiserver but defined outside k8s.io/api) are added by hand.
var builtinResources = []struct {
	group, version, kind, resource string
	namespaced                     bool
	subresources                   []string
}{
	{"", "v1", "ComponentStatus", "componentstatuses", false, nil},
	{"", "v1", "ConfigMap", "configmaps", true, nil},
	{"", "v1", "Endpoints", "endpoints", true, nil},
	{"", "v1", "Event", "events", true, nil},
	{"", "v1", "LimitRange", "limitranges", true, nil},
	{"", "v1", "Namespace", "namespaces", false, []string{"finalize", "status"}},
	{"", "v1", "Node", "nodes", false, []string{"proxy", "status"}},
	{"", "v1", "PersistentVolume", "persistentvolumes", false, []string{"status"}},
	{"", "v1", "PersistentVolumeClaim", "persistentvolumeclaims", true, []string{"status"}},
	{"", "v1", "Pod", "pods", true, []string{"attach", "binding", "ephemeralcontainers", "eviction", "exec", "log", "portforward", "proxy", "resize", "status"}},
	{"", "v1", "PodTemplate", "podtemplates", true, nil},
	{"", "v1", "ReplicationController", "replicationcontrollers", true, []string{"scale", "status"}},
	{"", "v1", "ResourceQuota", "resourcequotas", true, []string{"status"}},
	{"", "v1", "Secret", "secrets", true, nil},
	{"", "v1", "Service", "services", true, []string{"proxy", "status"}},
	{"", "v1", "ServiceAccount", "serviceaccounts", true, []string{"token"}},
	{"admissionregistration.k8s.io", "v1", "MutatingAdmissionPolicy", "mutatingadmissionpolicies", false, nil},
	{"admissionregistration.k8s.io", "v1", "MutatingAdmissionPolicyBinding", "mutatingadmissionpolicybindings", false, nil},
	{"admissionregistration.k8s.io", "v1", "MutatingWebhookConfiguration", "mutatingwebhookconfigurations", false, nil},
	{"admissionregistration.k8s.io", "v1", "ValidatingAdmissionPolicy", "validatingadmissionpolicies", false, []string{"status"}},
	{"admissionregistration.k8s.io", "v1", "ValidatingAdmissionPolicyBinding", "validatingadmissionpolicybindings", false, nil},
	{"admissionregistration.k8s.io", "v1", "ValidatingWebhookConfiguration", "validatingwebhookconfigurations", false, nil},
	{"admissionregistration.k8s.io", "v1alpha1", "MutatingAdmissionPolicy", "mutatingadmissionpolicies", false, nil},
	{"admissionregistration.k8s.io", "v1alpha1", "MutatingAdmissionPolicyBinding", "mutatingadmissionpolicybindings", false, nil},
	{"admissionregistration.k8s.io", "v1alpha1", "ValidatingAdmissionPolicy", "validatingadmissionpolicies", false, []string{"status"}},
	{"admissionregistration.k8s.io", "v1alpha1", "ValidatingAdmissionPolicyBinding", "validatingadmissionpolicybindings", false, nil},
	{"admissionregistration.k8s.io", "v1beta1", "MutatingAdmissionPolicy", "mutatingadmissionpolicies", false, nil},
	{"admissionregistration.k8s.io", "v1beta1", "MutatingAdmissionPolicyBinding", "mutatingadmissionpolicybindings", false, nil},
	{"admissionregistration.k8s.io", "v1beta1", "MutatingWebhookConfiguration", "mutatingwebhookconfigurations", false, nil},
	{"admissionregistration.k8s.io", "v1beta1", "ValidatingAdmissionPolicy", "validatingadmissionpolicies", false, []string{"status"}},
	{"admissionregistration.k8s.io", "v1beta1", "ValidatingAdmissionPolicyBinding", "validatingadmissionpolicybindings", false, nil},
	{"admissionregistration.k8s.io", "v1beta1", "ValidatingWebhookConfiguration", "validatingwebhookconfigurations", false, nil},
	{"apiextensions.k8s.io", "v1", "CustomResourceDefinition", "customresourcedefinitions", false, []string{"status"}},
	{"apiextensions.k8s.io", "v1beta1", "CustomResourceDefinition", "customresourcedefinitions", false, []string{"status"}},
	{"apiregistration.k8s.io", "v1", "APIService", "apiservices", false, []string{"status"}},
	{"apiregistration.k8s.io", "v1beta1", "APIService", "apiservices", false, []string{"status"}},
	{"apps", "v1", "ControllerRevision", "controllerrevisions", true, nil},
	{"apps", "v1", "DaemonSet", "daemonsets", true, []string{"status"}},
	{"apps", "v1", "Deployment", "deployments", true, []string{"scale", "status"}},
	{"apps", "v1", "ReplicaSet", "replicasets", true, []string{"scale", "status"}},
	{"apps", "v1", "StatefulSet", "statefulsets", true, []string{"scale", "status"}},
	{"apps", "v1beta1", "ControllerRevision", "controllerrevisions", true, nil},
	{"apps", "v1beta1", "Deployment", "deployments", true, []string{"status"}},
	{"apps", "v1beta1", "StatefulSet", "statefulsets", true, []string{"status"}},
	{"apps", "v1beta2", "ControllerRevision", "controllerrevisions", true, nil},
	{"apps", "v1beta2", "DaemonSet", "daemonsets", true, []string{"status"}},
	{"apps", "v1beta2", "Deployment", "deployments", true, []string{"status"}},
	{"apps", "v1beta2", "ReplicaSet", "replicasets", true, []string{"status"}},
	{"apps", "v1beta2", "StatefulSet", "statefulsets", true, []string{"scale", "status"}},
	{"authentication.k8s.io", "v1", "SelfSubjectReview", "selfsubjectreviews", false, []string{"status"}},
	{"authentication.k8s.io", "v1", "TokenReview", "tokenreviews", false, []string{"status"}},
	{"authentication.k8s.io", "v1alpha1", "SelfSubjectReview", "selfsubjectreviews", false, []string{"status"}},
	{"authentication.k8s.io", "v1beta1", "SelfSubjectReview", "selfsubjectreviews", false, []string{"status"}},
	{"authentication.k8s.io", "v1beta1", "TokenReview", "tokenreviews", false, []string{"status"}},
	{"authorization.k8s.io", "v1", "LocalSubjectAccessReview", "localsubjectaccessreviews", true, []string{"status"}},
	{"authorization.k8s.io", "v1", "SelfSubjectAccessReview", "selfsubjectaccessreviews", false, []string{"status"}},
	{"authorization.k8s.io", "v1", "SelfSubjectRulesReview", "selfsubjectrulesreviews", false, []string{"status"}},
	{"authorization.k8s.io", "v1", "SubjectAccessReview", "subjectaccessreviews", false, []string{"status"}},
	{"authorization.k8s.io", "v1beta1", "LocalSubjectAccessReview", "localsubjectaccessreviews", true, []string{"status"}},
	{"authorization.k8s.io", "v1beta1", "SelfSubjectAccessReview", "selfsubjectaccessreviews", false, []string{"status"}},
	{"authorization.k8s.io", "v1beta1", "SelfSubjectRulesReview", "selfsubjectrulesreviews", false, []string{"status"}},
	{"authorization.k8s.io", "v1beta1", "SubjectAccessReview", "subjectaccessreviews", false, []string{"status"}},
	{"autoscaling", "v1", "HorizontalPodAutoscaler", "horizontalpodautoscalers", true, []string{"status"}},
	{"autoscaling", "v2", "HorizontalPodAutoscaler", "horizontalpodautoscalers", true, []string{"status"}},
	{"batch", "v1", "CronJob", "cronjobs", true, []string{"status"}},
	{"batch", "v1", "Job", "jobs", true, []string{"status"}},
	{"batch", "v1beta1", "CronJob", "cronjobs", true, []string{"status"}},
	{"certificates.k8s.io", "v1", "CertificateSigningRequest", "certificatesigningrequests", false, []string{"approval", "status"}},
	{"certificates.k8s.io", "v1", "ClusterTrustBundle", "clustertrustbundles", false, nil},
	{"certificates.k8s.io", "v1", "PodCertificateRequest", "podcertificaterequests", true, []string{"status"}},
	{"certificates.k8s.io", "v1alpha1", "ClusterTrustBundle", "clustertrustbundles", false, nil},
	{"certificates.k8s.io", "v1beta1", "CertificateSigningRequest", "certificatesigningrequests", false, []string{"status"}},
	{"certificates.k8s.io", "v1beta1", "ClusterTrustBundle", "clustertrustbundles", false, nil},
	{"certificates.k8s.io", "v1beta1", "PodCertificateRequest", "podcertificaterequests", true, []string{"status"}},
	{"coordination.k8s.io", "v1", "Lease", "leases", true, nil},
	{"coordination.k8s.io", "v1alpha2", "LeaseCandidate", "leasecandidates", true, nil},
	{"coordination.k8s.io", "v1beta1", "Lease", "leases", true, nil},
	{"coordination.k8s.io", "v1beta1", "LeaseCandidate", "leasecandidates", true, nil},
	{"discovery.k8s.io", "v1", "EndpointSlice", "endpointslices", true, nil},
	{"discovery.k8s.io", "v1beta1", "EndpointSlice", "endpointslices", true, nil},
	{"events.k8s.io", "v1", "Event", "events", true, nil},
	{"events.k8s.io", "v1beta1", "Event", "events", true, nil},
	{"extensions", "v1beta1", "DaemonSet", "daemonsets", true, []string{"status"}},
	{"extensions", "v1beta1", "Deployment", "deployments", true, []string{"scale", "status"}},
	{"extensions", "v1beta1", "Ingress", "ingresses", true, []string{"status"}},
	{"extensions", "v1beta1", "NetworkPolicy", "networkpolicies", true, nil},
	{"extensions", "v1beta1", "ReplicaSet", "replicasets", true, []string{"scale", "status"}},
	{"flowcontrol.apiserver.k8s.io", "v1", "FlowSchema", "flowschemas", false, []string{"status"}},
	{"flowcontrol.apiserver.k8s.io", "v1", "PriorityLevelConfiguration", "prioritylevelconfigurations", false, []string{"status"}},
	{"flowcontrol.apiserver.k8s.io", "v1beta1", "FlowSchema", "flowschemas", false, []string{"status"}},
	{"flowcontrol.apiserver.k8s.io", "v1beta1", "PriorityLevelConfiguration", "prioritylevelconfigurations", false, []string{"status"}},
	{"flowcontrol.apiserver.k8s.io", "v1beta2", "FlowSchema", "flowschemas", false, []string{"status"}},
	{"flowcontrol.apiserver.k8s.io", "v1beta2", "PriorityLevelConfiguration", "prioritylevelconfigurations", false, []string{"status"}},
	{"flowcontrol.apiserver.k8s.io", "v1beta3", "FlowSchema", "flowschemas", false, []string{"status"}},
	{"flowcontrol.apiserver.k8s.io", "v1beta3", "PriorityLevelConfiguration", "prioritylevelconfigurations", false, []string{"status"}},
	{"internal.apiserver.k8s.io", "v1alpha1", "StorageVersion", "storageversions", false, []string{"status"}},
	{"lifecycle.k8s.io", "v1alpha1", "Eviction", "evictions", true, []string{"status"}},
	{"lifecycle.k8s.io", "v1alpha1", "EvictionRequest", "evictionrequests", true, []string{"status"}},
	{"networking.k8s.io", "v1", "IPAddress", "ipaddresses", false, nil},
	{"networking.k8s.io", "v1", "Ingress", "ingresses", true, []string{"status"}},
	{"networking.k8s.io", "v1", "IngressClass", "ingressclasses", false, nil},
	{"networking.k8s.io", "v1", "NetworkPolicy", "networkpolicies", true, nil},
	{"networking.k8s.io", "v1", "ServiceCIDR", "servicecidrs", false, []string{"status"}},
	{"networking.k8s.io", "v1beta1", "IPAddress", "ipaddresses", false, nil},
	{"networking.k8s.io", "v1beta1", "Ingress", "ingresses", true, []string{"status"}},
	{"networking.k8s.io", "v1beta1", "IngressClass", "ingressclasses", false, nil},
	{"networking.k8s.io", "v1beta1", "ServiceCIDR", "servicecidrs", false, []string{"status"}},
	{"node.k8s.io", "v1", "RuntimeClass", "runtimeclasses", false, nil},
	{"node.k8s.io", "v1alpha1", "RuntimeClass", "runtimeclasses", false, nil},
	{"node.k8s.io", "v1beta1", "RuntimeClass", "runtimeclasses", false, nil},
	{"policy", "v1", "PodDisruptionBudget", "poddisruptionbudgets", true, []string{"status"}},
	{"policy", "v1beta1", "PodDisruptionBudget", "poddisruptionbudgets", true, []string{"status"}},
	{"rbac.authorization.k8s.io", "v1", "ClusterRole", "clusterroles", false, nil},
	{"rbac.authorization.k8s.io", "v1", "ClusterRoleBinding", "clusterrolebindings", false, nil},
	{"rbac.authorization.k8s.io", "v1", "Role", "roles", true, nil},
	{"rbac.authorization.k8s.io", "v1", "RoleBinding", "rolebindings", true, nil},
	{"rbac.authorization.k8s.io", "v1alpha1", "ClusterRole", "clusterroles", false, nil},
	{"rbac.authorization.k8s.io", "v1alpha1", "ClusterRoleBinding", "clusterrolebindings", false, nil},
	{"rbac.authorization.k8s.io", "v1alpha1", "Role", "roles", true, nil},
	{"rbac.authorization.k8s.io", "v1alpha1", "RoleBinding", "rolebindings", true, nil},
	{"rbac.authorization.k8s.io", "v1beta1", "ClusterRole", "clusterroles", false, nil},
	{"rbac.authorization.k8s.io", "v1beta1", "ClusterRoleBinding", "clusterrolebindings", false, nil},
	{"rbac.authorization.k8s.io", "v1beta1", "Role", "roles", true, nil},
	{"rbac.authorization.k8s.io", "v1beta1", "RoleBinding", "rolebindings", true, nil},
	{"resource.k8s.io", "v1", "DeviceClass", "deviceclasses", false, nil},
	{"resource.k8s.io", "v1", "DeviceTaintRule", "devicetaintrules", false, []string{"status"}},
	{"resource.k8s.io", "v1", "ResourceClaim", "resourceclaims", true, []string{"status"}},
	{"resource.k8s.io", "v1", "ResourceClaimTemplate", "resourceclaimtemplates", true, nil},
	{"resource.k8s.io", "v1", "ResourceSlice", "resourceslices", false, nil},
	{"resource.k8s.io", "v1alpha3", "DeviceTaintRule", "devicetaintrules", false, []string{"status"}},
	{"resource.k8s.io", "v1alpha3", "ResourcePoolStatusRequest", "resourcepoolstatusrequests", false, []string{"status"}},
	{"resource.k8s.io", "v1beta1", "DeviceClass", "deviceclasses", false, nil},
	{"resource.k8s.io", "v1beta1", "ResourceClaim", "resourceclaims", true, []string{"status"}},
	{"resource.k8s.io", "v1beta1", "ResourceClaimTemplate", "resourceclaimtemplates", true, nil},
	{"resource.k8s.io", "v1beta1", "ResourceSlice", "resourceslices", false, nil},
	{"resource.k8s.io", "v1beta2", "DeviceClass", "deviceclasses", false, nil},
	{"resource.k8s.io", "v1beta2", "DeviceTaintRule", "devicetaintrules", false, []string{"status"}},
	{"resource.k8s.io", "v1beta2", "ResourceClaim", "resourceclaims", true, []string{"status"}},
	{"resource.k8s.io", "v1beta2", "ResourceClaimTemplate", "resourceclaimtemplates", true, nil},
	{"resource.k8s.io", "v1beta2", "ResourceSlice", "resourceslices", false, nil},
	{"scheduling.k8s.io", "v1", "PriorityClass", "priorityclasses", false, nil},
	{"scheduling.k8s.io", "v1alpha3", "CompositePodGroup", "compositepodgroups", true, []string{"status"}},
	{"scheduling.k8s.io", "v1alpha3", "PodGroup", "podgroups", true, []string{"status"}},
	{"scheduling.k8s.io", "v1alpha3", "Workload", "workloads", true, nil},
	{"scheduling.k8s.io", "v1beta1", "PodGroup", "podgroups", true, []string{"status"}},
	{"scheduling.k8s.io", "v1beta1", "PriorityClass", "priorityclasses", false, nil},
	{"scheduling.k8s.io", "v1beta1", "Workload", "workloads", true, nil},
	{"storage.k8s.io", "v1", "CSIDriver", "csidrivers", false, nil},
	{"storage.k8s.io", "v1", "CSINode", "csinodes", false, []string{"status"}},
	{"storage.k8s.io", "v1", "CSIStorageCapacity", "csistoragecapacities", true, nil},
	{"storage.k8s.io", "v1", "StorageClass", "storageclasses", false, nil},
	{"storage.k8s.io", "v1", "VolumeAttachment", "volumeattachments", false, []string{"status"}},
	{"storage.k8s.io", "v1", "VolumeAttributesClass", "volumeattributesclasses", false, nil},
	{"storage.k8s.io", "v1alpha1", "CSIStorageCapacity", "csistoragecapacities", true, nil},
	{"storage.k8s.io", "v1alpha1", "VolumeAttachment", "volumeattachments", false, []string{"status"}},
	{"storage.k8s.io", "v1alpha1", "VolumeAttributesClass", "volumeattributesclasses", false, nil},
	{"storage.k8s.io", "v1beta1", "CSIDriver", "csidrivers", false, nil},
	{"storage.k8s.io", "v1beta1", "CSINode", "csinodes", false, []string{"status"}},
	{"storage.k8s.io", "v1beta1", "CSIStorageCapacity", "csistoragecapacities", true, nil},
	{"storage.k8s.io", "v1beta1", "StorageClass", "storageclasses", false, nil},
	{"storage.k8s.io", "v1beta1", "VolumeAttachment", "volumeattachments", false, []string{"status"}},
	{"storage.k8s.io", "v1beta1", "VolumeAttributesClass", "volumeattributesclasses", false, nil},
	{"storagemigration.k8s.io", "v1", "StorageVersionMigration", "storageversionmigrations", false, []string{"status"}},
	{"storagemigration.k8s.io", "v1beta1", "StorageVersionMigration", "storageversionmigrations", false, []string{"status"}},
}
