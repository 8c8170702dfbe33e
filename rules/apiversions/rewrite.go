package apiversions

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kilnhq/kiln/admit/servedversions"
	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules"
)

// apiRewrite is a removed apiVersion whose replacement has the same schema
// and the same defaults, so changing apiVersion alone keeps the object's meaning.
type apiRewrite struct {
	from, kind, to string
}

// apiRewrites lists only the pairs the Deprecated API Migration Guide
// describes with "no notable changes", and FlowSchema, whose v1beta1 to v1
// schemas are the same. Deliberately left out, because the replacement
// changes fields or behaviour: the apps/v1 workloads (required selector,
// different defaults), Ingress, webhook configurations and CRDs (new
// required fields and defaults), PodDisruptionBudget (policy/v1 reads an
// empty selector as every pod, v1beta1 as none), HorizontalPodAutoscaler,
// EndpointSlice, Event, CertificateSigningRequest, the authorization reviews,
// and PriorityLevelConfiguration (assuredConcurrencyShares renamed and zero
// read differently in v1). Those stay findings for a person to migrate.
var apiRewrites = []apiRewrite{
	{"rbac.authorization.k8s.io/v1beta1", "ClusterRole", "rbac.authorization.k8s.io/v1"},
	{"rbac.authorization.k8s.io/v1beta1", "ClusterRoleBinding", "rbac.authorization.k8s.io/v1"},
	{"rbac.authorization.k8s.io/v1beta1", "Role", "rbac.authorization.k8s.io/v1"},
	{"rbac.authorization.k8s.io/v1beta1", "RoleBinding", "rbac.authorization.k8s.io/v1"},
	{"scheduling.k8s.io/v1beta1", "PriorityClass", "scheduling.k8s.io/v1"},
	{"coordination.k8s.io/v1beta1", "Lease", "coordination.k8s.io/v1"},
	{"storage.k8s.io/v1beta1", "StorageClass", "storage.k8s.io/v1"},
	{"storage.k8s.io/v1beta1", "CSIDriver", "storage.k8s.io/v1"},
	{"storage.k8s.io/v1beta1", "CSINode", "storage.k8s.io/v1"},
	{"storage.k8s.io/v1beta1", "VolumeAttachment", "storage.k8s.io/v1"},
	{"storage.k8s.io/v1beta1", "CSIStorageCapacity", "storage.k8s.io/v1"},
	{"networking.k8s.io/v1beta1", "IngressClass", "networking.k8s.io/v1"},
	{"apiregistration.k8s.io/v1beta1", "APIService", "apiregistration.k8s.io/v1"},
	{"batch/v1beta1", "CronJob", "batch/v1"},
	{"node.k8s.io/v1beta1", "RuntimeClass", "node.k8s.io/v1"},
	{"flowcontrol.apiserver.k8s.io/v1beta1", "FlowSchema", "flowcontrol.apiserver.k8s.io/v1"},
	{"flowcontrol.apiserver.k8s.io/v1beta2", "FlowSchema", "flowcontrol.apiserver.k8s.io/v1"},
	{"flowcontrol.apiserver.k8s.io/v1beta3", "FlowSchema", "flowcontrol.apiserver.k8s.io/v1"},
}

// rewriteFix is the fix of an api/removed finding: the replacement
// apiVersion when it has the same schema and the target serves it (by the
// served-versions table), else nil (the object is for a person to migrate).
func rewriteFix(apiVersion, kind string, kube manifest.KubeVersion) *rules.Fix {
	for _, r := range apiRewrites {
		if r.from == apiVersion && r.kind == kind && servedAt(r.to, r.kind, kube) {
			return &rules.Fix{Action: rules.FixAPIVersion, APIVersion: r.to}
		}
	}
	return nil
}

// FixableRules lists the api/… rules whose findings may carry a fix.
func FixableRules() []string { return []string{Removed} }

// servedAt reports whether the target serves apiVersion/kind by default.
func servedAt(apiVersion, kind string, kube manifest.KubeVersion) bool {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return false
	}
	e, ok := servedversions.Lookup(gv.Group, gv.Version, kind)
	return ok && e.Served.Has(kube)
}
