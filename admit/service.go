package admit

import (
	"k8s.io/apimachinery/pkg/runtime"
	api "k8s.io/kubernetes/pkg/apis/core"
)

// Placeholders for what a Service create allocates before validation (the
// service REST storage's BeginCreate: cluster IPs, IP families, node ports,
// the health-check node port). kiln has no allocator and no cluster: these
// fixed values stand in for the ones the server would pick, so that
// validation judges a Service as it judges it after allocation.
const (
	placeholderClusterIP   = "10.96.0.10"
	placeholderNodePort    = 30000
	placeholderHealthCheck = 32000
)

// allocate fills in what the server allocates for a new object of some
// kinds before its strategy runs.
func allocate(obj runtime.Object) {
	svc, ok := obj.(*api.Service)
	if !ok || svc.Spec.Type == api.ServiceTypeExternalName {
		return
	}
	if svc.Spec.ClusterIP == "" && len(svc.Spec.ClusterIPs) == 0 {
		svc.Spec.ClusterIP = placeholderClusterIP
	}
	if len(svc.Spec.ClusterIPs) == 0 {
		svc.Spec.ClusterIPs = []string{svc.Spec.ClusterIP}
	}
	if len(svc.Spec.IPFamilies) == 0 {
		svc.Spec.IPFamilies = []api.IPFamily{api.IPv4Protocol}
	}
	if svc.Spec.IPFamilyPolicy == nil {
		single := api.IPFamilyPolicySingleStack
		svc.Spec.IPFamilyPolicy = &single
	}
	wantsNodePorts := svc.Spec.Type == api.ServiceTypeNodePort ||
		(svc.Spec.Type == api.ServiceTypeLoadBalancer && (svc.Spec.AllocateLoadBalancerNodePorts == nil || *svc.Spec.AllocateLoadBalancerNodePorts))
	next := int32(placeholderNodePort)
	for i := range svc.Spec.Ports {
		if wantsNodePorts && svc.Spec.Ports[i].NodePort == 0 {
			svc.Spec.Ports[i].NodePort = next
			next++
		}
	}
	if svc.Spec.Type == api.ServiceTypeLoadBalancer && svc.Spec.ExternalTrafficPolicy == api.ServiceExternalTrafficPolicyLocal && svc.Spec.HealthCheckNodePort == 0 {
		svc.Spec.HealthCheckNodePort = placeholderHealthCheck
	}
}
