package admit

import (
	"fmt"
	"strings"

	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/validation/field"
	apiservice "k8s.io/kubernetes/pkg/api/service"
	api "k8s.io/kubernetes/pkg/apis/core"
	"k8s.io/kubernetes/pkg/apis/core/validation"
	"k8s.io/kubernetes/pkg/registry/core/service/ipallocator"
	"k8s.io/kubernetes/pkg/registry/core/service/portallocator"
	netutils "k8s.io/utils/net"
)

// DefaultServiceCIDR is the service network kiln assumes when none is
// given: single-stack IPv4, as kubeadm and kind set a cluster up (kubeadm's
// --service-cluster-ip-range). Its range is only where kiln takes the cluster
// IPs it fills in from: a cluster IP written in a manifest is checked against
// a range only when the range was given (Options.ServiceCIDRs).
const DefaultServiceCIDR = "10.96.0.0/12"

// nodePortRange is kube-apiserver's default --service-node-port-range.
var nodePortRange = utilnet.PortRange{Base: 30000, Size: 2768}

// serviceNetwork is the cluster's service network as kube-apiserver's
// --service-cluster-ip-range sets it: one range per IP family it serves,
// the primary (default) family first.
type serviceNetwork struct {
	families []api.IPFamily
	ranges   map[api.IPFamily]*ipallocator.Range
	// given is set when the ranges were given rather than assumed: only
	// then is a cluster IP written in a manifest checked against them.
	given bool
}

// newServiceNetwork makes the service network of cidrs (nil: the default).
func newServiceNetwork(cidrs []string) (*serviceNetwork, error) {
	n := &serviceNetwork{ranges: map[api.IPFamily]*ipallocator.Range{}, given: len(cidrs) > 0}
	if len(cidrs) == 0 {
		cidrs = []string{DefaultServiceCIDR}
	}
	if len(cidrs) > 2 {
		return nil, fmt.Errorf("a service network has one or two CIDRs (one per IP family), not %d", len(cidrs))
	}
	for _, c := range cidrs {
		_, ipnet, err := netutils.ParseCIDRSloppy(strings.TrimSpace(c))
		if err != nil {
			return nil, fmt.Errorf("%q is not a CIDR (e.g. %s or fd00:10:96::/112)", c, DefaultServiceCIDR)
		}
		fam := api.IPv4Protocol
		if netutils.IsIPv6CIDR(ipnet) {
			fam = api.IPv6Protocol
		}
		if _, dup := n.ranges[fam]; dup {
			return nil, fmt.Errorf("the two CIDRs of a dual-stack service network must be of different IP families; both %s and %s are %s", cidrs[0], cidrs[1], fam)
		}
		r, err := ipallocator.NewInMemory(ipnet)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", c, err)
		}
		n.families = append(n.families, fam)
		n.ranges[fam] = r
	}
	return n, nil
}

// assumedNote is said after the server's words where the service network
// decides and was assumed rather than given, as Pod Security findings say
// an assumed namespace's level: "" when it was given.
func (n *serviceNetwork) assumedNote() string {
	if n.given {
		return ""
	}
	return " (the service network is not given: kiln assumed single-stack IPv4, " + DefaultServiceCIDR + "; set the cluster's with --service-cidr or serviceCIDRs, e.g. 10.96.0.0/12,fd00:10:96::/112 for dual-stack)"
}

// allocateService does what the service REST storage's BeginCreate does to
// a new Service before its strategy runs (k8s.io/kubernetes
// pkg/registry/core/service/storage: normalizeClusterIPs, then
// Allocators.allocateCreate: initIPFamilyFields, allocClusterIPs,
// initNodePorts, allocHealthCheckNodePort), on the cluster's service
// network, and returns its errors (the server stops at them) and the values
// kiln chose where the server would pick from its allocators.
func (n *serviceNetwork) allocateService(svc *api.Service) (field.ErrorList, []invented) {
	// normalizeClusterIPs, on a create: a client that sets only the
	// singular field gets the plural one.
	if len(svc.Spec.ClusterIP) > 0 && len(svc.Spec.ClusterIPs) == 0 {
		svc.Spec.ClusterIPs = []string{svc.Spec.ClusterIP}
	}
	if errs := n.initIPFamilyFields(svc); len(errs) > 0 {
		return errs, nil
	}
	chosen, errs := n.allocClusterIPs(svc)
	if len(errs) > 0 {
		return errs, chosen
	}
	ports, errs := allocNodePorts(svc)
	return errs, append(chosen, ports...)
}

// initIPFamilyFields is Allocators.initIPFamilyFields for a create (no old
// object): the IP family policy's default, the families inferred from the
// cluster IPs, and the errors for families the cluster does not serve.
func (n *serviceNetwork) initIPFamilyFields(service *api.Service) field.ErrorList {
	if service.Spec.Type == api.ServiceTypeExternalName {
		return nil
	}
	if service.Spec.IPFamilyPolicy == nil {
		policy := api.IPFamilyPolicySingleStack
		if service.Spec.ClusterIP == api.ClusterIPNone && len(service.Spec.Selector) == 0 {
			// Headless and selectorless defaults to dual-stack.
			policy = api.IPFamilyPolicyRequireDualStack
		}
		service.Spec.IPFamilyPolicy = &policy
	}
	if el := validation.ValidateServiceClusterIPsRelatedFields(service, nil); len(el) != 0 {
		return el
	}
	var el field.ErrorList
	policy := *service.Spec.IPFamilyPolicy
	if policy == api.IPFamilyPolicySingleStack {
		if len(service.Spec.ClusterIPs) == 2 {
			el = append(el, field.Invalid(field.NewPath("spec", "ipFamilyPolicy"), service.Spec.IPFamilyPolicy,
				"must be 'RequireDualStack' or 'PreferDualStack' when multiple cluster IPs are specified"))
		}
		if len(service.Spec.IPFamilies) == 2 {
			el = append(el, field.Invalid(field.NewPath("spec", "ipFamilyPolicy"), service.Spec.IPFamilyPolicy,
				"must be 'RequireDualStack' or 'PreferDualStack' when multiple IP families are specified"))
		}
	}
	for i, ip := range service.Spec.ClusterIPs {
		if ip == api.ClusterIPNone {
			break
		}
		fam := familyOf(ip)
		if i >= len(service.Spec.IPFamilies) {
			if _, found := n.ranges[fam]; !found {
				el = append(el, field.Invalid(field.NewPath("spec", "clusterIPs").Index(i), service.Spec.ClusterIPs,
					fmt.Sprintf("%s is not configured on this cluster%s", fam, n.assumedNote())))
			} else {
				service.Spec.IPFamilies = append(service.Spec.IPFamilies, fam)
			}
		}
	}
	if len(el) > 0 {
		return el
	}
	if service.Spec.ClusterIP == api.ClusterIPNone && len(service.Spec.Selector) == 0 {
		// Headless and selectorless: any families, the default first.
		if len(service.Spec.IPFamilies) == 0 {
			service.Spec.IPFamilies = []api.IPFamily{n.families[0]}
		}
		if len(service.Spec.IPFamilies) < 2 && *service.Spec.IPFamilyPolicy != api.IPFamilyPolicySingleStack {
			service.Spec.IPFamilies = append(service.Spec.IPFamilies, otherFamily(service.Spec.IPFamilies[0]))
		}
		return nil
	}
	if policy == api.IPFamilyPolicyRequireDualStack && len(n.ranges) < 2 {
		el = append(el, field.Invalid(field.NewPath("spec", "ipFamilyPolicy"), service.Spec.IPFamilyPolicy,
			"this cluster is not configured for dual-stack services"+n.assumedNote()))
	}
	for i, fam := range service.Spec.IPFamilies {
		if _, found := n.ranges[fam]; !found {
			el = append(el, field.Invalid(field.NewPath("spec", "ipFamilies").Index(i), fam, "not configured on this cluster"+n.assumedNote()))
		}
	}
	if len(el) > 0 {
		return el
	}
	if len(service.Spec.IPFamilies) == 0 {
		service.Spec.IPFamilies = []api.IPFamily{n.families[0]}
	}
	if policy != api.IPFamilyPolicySingleStack && len(service.Spec.IPFamilies) == 1 && len(n.ranges) == 2 {
		service.Spec.IPFamilies = append(service.Spec.IPFamilies, otherFamily(service.Spec.IPFamilies[0]))
	}
	return nil
}

// allocClusterIPs is Allocators.allocClusterIPs: a cluster IP for each
// family without one, and the IPs written checked against the range when
// the range was given. The server picks a free address at random; kiln
// takes the range's first one (after the network address, which the
// allocator never gives).
func (n *serviceNetwork) allocClusterIPs(service *api.Service) ([]invented, field.ErrorList) {
	if service.Spec.Type == api.ServiceTypeExternalName {
		return nil, nil
	}
	if len(service.Spec.ClusterIPs) > 0 && service.Spec.ClusterIPs[0] == api.ClusterIPNone {
		return nil, nil
	}
	var chosen []invented
	for i, fam := range service.Spec.IPFamilies {
		if i >= len(service.Spec.ClusterIPs) {
			service.Spec.ClusterIPs = append(service.Spec.ClusterIPs, "")
		}
		r := n.ranges[fam]
		if ip := service.Spec.ClusterIPs[i]; ip != "" {
			if !n.given {
				continue
			}
			addr, cidr := netutils.ParseIPSloppy(ip), r.CIDR()
			err := ipallocator.ErrMismatchedNetwork // the allocator of ServiceCIDRs: no range holds it
			if cidr.Contains(addr) {
				err = r.DryRun().Allocate(addr)
			}
			if err != nil {
				return chosen, field.ErrorList{field.Invalid(field.NewPath("spec", "clusterIPs"), service.Spec.ClusterIPs, fmt.Sprintf("failed to allocate IP %v: %v", ip, err))}
			}
			continue
		}
		cidr := r.CIDR()
		ip := netutils.AddIPOffset(netutils.BigForIP(cidr.IP), 1).String()
		service.Spec.ClusterIPs[i] = ip
		if i == 0 {
			service.Spec.ClusterIP = ip
		}
		chosen = append(chosen, invented{value: ip, says: fmt.Sprintf("(the %s cluster IP the server allocates)", fam)})
	}
	return chosen, nil
}

// allocNodePorts is txnAllocNodePorts: a node port for each port of a
// NodePort Service (and a LoadBalancer's, unless it turns them off), the
// requested ones reserved in --service-node-port-range's default, and a
// health-check node port for a LoadBalancer with externalTrafficPolicy
// Local. The server picks free ports at random; kiln takes the range's
// first ones that the Service does not request.
func allocNodePorts(service *api.Service) ([]invented, field.ErrorList) {
	if service.Spec.Type != api.ServiceTypeNodePort && service.Spec.Type != api.ServiceTypeLoadBalancer {
		return nil, nil // neither node ports nor a health-check port
	}
	pa, err := portallocator.NewInMemory(nodePortRange)
	if err != nil {
		return nil, nil
	}
	requested := map[int]bool{}
	for _, p := range service.Spec.Ports {
		requested[int(p.NodePort)] = true
	}
	if service.Spec.HealthCheckNodePort != 0 {
		requested[int(service.Spec.HealthCheckNodePort)] = true
	}
	next := nodePortRange.Base
	var chosen []invented
	allocateNext := func() int {
		for ; next < nodePortRange.Base+nodePortRange.Size; next++ {
			if !requested[next] && pa.Allocate(next) == nil {
				chosen = append(chosen, invented{value: fmt.Sprint(next), says: "(the node port the server allocates)"})
				return next
			}
		}
		return 0
	}
	// initNodePorts: a port of the same number shares its node port.
	byPort := map[int32]int32{}
	for i := range service.Spec.Ports {
		sp := &service.Spec.Ports[i]
		if sp.NodePort == 0 && !shouldAllocateNodePorts(service) {
			continue
		}
		allocated := byPort[sp.Port]
		switch {
		case allocated == 0:
			if np := requestedNodePort(sp.Port, service.Spec.Ports); np != 0 {
				if err := pa.Allocate(int(np)); err != nil {
					return chosen, field.ErrorList{field.Invalid(field.NewPath("spec", "ports").Index(i).Child("nodePort"), np, err.Error())}
				}
				sp.NodePort = np
			} else {
				sp.NodePort = int32(allocateNext())
			}
			byPort[sp.Port] = sp.NodePort
		case sp.NodePort == 0:
			sp.NodePort = allocated
		case sp.NodePort != allocated:
			if err := pa.Allocate(int(sp.NodePort)); err != nil {
				return chosen, field.ErrorList{field.Invalid(field.NewPath("spec", "ports").Index(i).Child("nodePort"), sp.NodePort, err.Error())}
			}
		}
	}
	if apiservice.NeedsHealthCheck(service) {
		// allocHealthCheckNodePort; its errors are internal errors there.
		if hc := service.Spec.HealthCheckNodePort; hc != 0 {
			if err := pa.Allocate(int(hc)); err != nil {
				return chosen, field.ErrorList{field.InternalError(field.NewPath("spec", "healthCheckNodePort"),
					fmt.Errorf("failed to allocate requested HealthCheck NodePort %v: %v", hc, err))}
			}
		} else {
			service.Spec.HealthCheckNodePort = int32(allocateNext())
		}
	}
	return chosen, nil
}

func shouldAllocateNodePorts(service *api.Service) bool {
	if service.Spec.Type == api.ServiceTypeNodePort {
		return true
	}
	return service.Spec.AllocateLoadBalancerNodePorts == nil || *service.Spec.AllocateLoadBalancerNodePorts
}

// requestedNodePort is findRequestedNodePort: the node port a port of the
// same number requests.
func requestedNodePort(port int32, ports []api.ServicePort) int32 {
	for _, p := range ports {
		if p.Port == port && p.NodePort != 0 {
			return p.NodePort
		}
	}
	return 0
}

func familyOf(ip string) api.IPFamily {
	switch {
	case netutils.IsIPv4String(ip):
		return api.IPv4Protocol
	case netutils.IsIPv6String(ip):
		return api.IPv6Protocol
	}
	return api.IPFamily("unknown")
}

func otherFamily(fam api.IPFamily) api.IPFamily {
	if fam == api.IPv4Protocol {
		return api.IPv6Protocol
	}
	return api.IPv4Protocol
}

// allocationField reports whether allocation sets the field: where it
// failed, validation of them says nothing the server would (it stops
// before).
func allocationField(f string) bool {
	for _, a := range []string{"spec.clusterIP", "spec.clusterIPs", "spec.ipFamilies", "spec.ipFamilyPolicy", "spec.healthCheckNodePort"} {
		if within(f, a) {
			return true
		}
	}
	return strings.HasPrefix(f, "spec.ports[") && strings.HasSuffix(f, "].nodePort")
}
