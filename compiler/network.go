package compiler

import (
	"fmt"
	"net"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// The cluster DNS every pod with a NetworkPolicy must still reach: the
// kube-dns pods (CoreDNS keeps the label) in kube-system, port 53.
var (
	dnsNamespace = map[string]string{"kubernetes.io/metadata.name": "kube-system"}
	dnsPods      = map[string]string{"k8s-app": "kube-dns"}
)

// kubeNamespaceNameLabel: the kubernetes.io/metadata.name label is on every
// Namespace from 1.21 (NamespaceDefaultLabelName), which the DNS rule selects by.
var kubeNamespaceNameLabel = kubeCronJobV1

// networkPolicy emits the networking.k8s.io/v1 NetworkPolicy of a service
// with network (nil without): its pods take traffic only from allowFrom, on
// the service's ports, and connect only to DNS, the spec's services (on
// their ports) and egress.
func (e *emitter) networkPolicy(name string, s *Service) *yaml.Node {
	n := s.Network
	if n == nil {
		return nil
	}
	path := "spec.services." + name + ".network"
	p := e.at(path)
	spec := mapping(p,
		field{"podSelector", mapping(p, field{"matchLabels", stringMap(p, e.selector(name))})},
		field{"policyTypes", strs(p, []string{"Ingress", "Egress"})},
	)
	if len(n.AllowFrom) > 0 {
		ap := e.at(path + ".allowFrom")
		var from []*yaml.Node
		for i, peer := range n.AllowFrom {
			pp := e.at(fmt.Sprintf("%s.allowFrom[%d]", path, i))
			switch {
			case peer.Service != "":
				from = append(from, mapping(pp, field{"podSelector", mapping(pp, field{"matchLabels", stringMap(pp, e.selector(peer.Service))})}))
			case peer.Job != "":
				from = append(from, mapping(pp, field{"podSelector", mapping(pp, field{"matchLabels", stringMap(pp, e.selector(peer.Job))})}))
			default:
				from = append(from, mapping(pp, field{"namespaceSelector", mapping(pp, field{"matchLabels", stringMap(pp, peer.Namespaces)})}))
			}
		}
		add(spec, field{"ingress", seq(ap, mapping(ap, field{"from", seq(ap, from...)}, field{"ports", e.policyPorts(name, s)}))})
	}
	egress := []*yaml.Node{mapping(p,
		field{"to", seq(p, mapping(p,
			field{"namespaceSelector", mapping(p, field{"matchLabels", stringMap(p, dnsNamespace)})},
			field{"podSelector", mapping(p, field{"matchLabels", stringMap(p, dnsPods)})},
		))},
		field{"ports", seq(p,
			mapping(p, field{"port", num(p, 53)}, field{"protocol", str(p, "UDP")}),
			mapping(p, field{"port", num(p, 53)}, field{"protocol", str(p, "TCP")}),
		)},
	)}
	for _, other := range sortedKeys(e.app.Spec.Services) {
		o := e.app.Spec.Services[other]
		if len(o.Ports) == 0 {
			continue
		}
		op := e.at("spec.services." + other + ".ports")
		egress = append(egress, mapping(op,
			field{"to", seq(op, mapping(op, field{"podSelector", mapping(op, field{"matchLabels", stringMap(op, e.selector(other))})}))},
			field{"ports", e.policyPorts(other, o)},
		))
	}
	for i, eg := range n.Egress {
		ep := fmt.Sprintf("%s.egress[%d]", path, i)
		at := e.at(ep)
		var to *yaml.Node
		if eg.CIDR != "" {
			block := mapping(at, field{"cidr", str(e.at(ep+".cidr"), eg.CIDR)})
			if len(eg.Except) > 0 {
				add(block, field{"except", strs(e.at(ep+".except"), eg.Except)})
			}
			to = mapping(at, field{"ipBlock", block})
		} else {
			np := e.at(ep + ".namespaces")
			to = mapping(at, field{"namespaceSelector", mapping(np, field{"matchLabels", stringMap(np, eg.Namespaces)})})
		}
		rule := mapping(at, field{"to", seq(at, to)})
		if len(eg.Ports) > 0 {
			pp := e.at(ep + ".ports")
			var ports []*yaml.Node
			for _, port := range eg.Ports {
				ports = append(ports, mapping(pp, field{"port", num(pp, port)}, field{"protocol", str(pp, "TCP")}))
			}
			add(rule, field{"ports", seq(pp, ports...)})
		}
		egress = append(egress, rule)
	}
	add(spec, field{"egress", seq(p, egress...)})
	return object(p, "networking.k8s.io/v1", "NetworkPolicy", e.metadata(p, name, true, nil), spec)
}

// policyPorts are a service's ports as NetworkPolicy ports (the pods'
// ports: kiln gives each Service port the container port of that number).
func (e *emitter) policyPorts(name string, s *Service) *yaml.Node {
	var ports []*yaml.Node
	for _, port := range sortedKeys(s.Ports) {
		at := e.at(sub("spec.services."+name+".ports", port))
		ports = append(ports, mapping(at, field{"port", num(at, s.Ports[port])}, field{"protocol", str(at, "TCP")}))
	}
	return seq(e.at("spec.services."+name+".ports"), ports...)
}

// network checks a service's network block: peers that exist, IP blocks
// that parse, and ports to let peers in to.
func (c *checker) network(a *App, name string, s *Service) {
	n := s.Network
	if n == nil {
		return
	}
	path := "spec.services." + name + ".network"
	if a.Kube.Less(kubeNamespaceNameLabel) {
		c.errorf(path, "kiln lets DNS through by the kubernetes.io/metadata.name label of kube-system, set on Namespaces from Kubernetes %s; target.kubernetes is %s", kubeNamespaceNameLabel, a.Kube)
	}
	if len(n.AllowFrom) > 0 && len(s.Ports) == 0 {
		c.errorf(path+".allowFrom", "allowFrom lets peers reach the service's ports, and service %q declares none; add ports or remove allowFrom", name)
	}
	byNamespace := false
	for i, peer := range n.AllowFrom {
		pp := fmt.Sprintf("%s.allowFrom[%d]", path, i)
		set := 0
		for _, b := range []bool{peer.Service != "", peer.Job != "", peer.Namespaces != nil} {
			if b {
				set++
			}
		}
		if set != 1 {
			c.errorf(pp, "a peer is exactly one of {service: NAME}, {job: NAME} (of this spec) or {namespaces: {LABEL: VALUE}}; it sets %d", set)
			continue
		}
		switch {
		case peer.Service != "":
			if _, ok := a.Spec.Services[peer.Service]; !ok {
				c.errorf(pp+".service", "service %q is not in spec.services; %s", peer.Service, known("services", sortedKeys(a.Spec.Services), peer.Service))
			}
		case peer.Job != "":
			if _, ok := a.Spec.Jobs[peer.Job]; !ok {
				c.errorf(pp+".job", "job %q is not in spec.jobs; %s", peer.Job, known("jobs", sortedKeys(a.Spec.Jobs), peer.Job))
			}
		default:
			byNamespace = true
			c.labels(pp+".namespaces", peer.Namespaces)
		}
	}
	if len(s.Routes) > 0 && !byNamespace {
		c.warnf(path+".allowFrom", "service %q has routes, whose traffic comes from the Gateway's (or ingress controller's) pods in another namespace, and allowFrom lets no namespace in, so the routes will time out; add {namespaces: {kubernetes.io/metadata.name: GATEWAY-NAMESPACE}}", name)
	}
	for i, eg := range n.Egress {
		ep := fmt.Sprintf("%s.egress[%d]", path, i)
		if (eg.CIDR == "") == (eg.Namespaces == nil) {
			c.errorf(ep, "an egress destination is exactly one of {cidr: BLOCK} or {namespaces: {LABEL: VALUE}}")
			continue
		}
		if eg.Namespaces != nil {
			c.labels(ep+".namespaces", eg.Namespaces)
			if len(eg.Except) > 0 {
				c.errorf(ep+".except", "except leaves blocks out of a cidr; this destination is namespaces")
			}
			continue
		}
		_, block, err := net.ParseCIDR(eg.CIDR)
		if err != nil {
			c.errorf(ep+".cidr", "cidr %q is not an IP block; write an address and a prefix length, e.g. 10.0.0.0/8 or 0.0.0.0/0 (any address)", eg.CIDR)
			continue
		}
		for j, x := range eg.Except {
			ip, inner, err := net.ParseCIDR(x)
			if err != nil {
				c.errorf(fmt.Sprintf("%s.except[%d]", ep, j), "except %q is not an IP block, e.g. 10.1.0.0/16", x)
				continue
			}
			bo, _ := block.Mask.Size()
			io, _ := inner.Mask.Size()
			if !block.Contains(ip) || io <= bo {
				c.errorf(fmt.Sprintf("%s.except[%d]", ep, j), "except %s is not a smaller block inside cidr %s; the API server refuses it", x, eg.CIDR)
			}
		}
	}
}

// known lists the names a reference could have used, nearest first.
func known(what string, names []string, got string) string {
	if len(names) == 0 {
		return "the spec declares no " + what
	}
	s := "known " + what + ": " + strings.Join(names, ", ")
	if near := nearest(got, names); near != "" {
		s = fmt.Sprintf("did you mean %q? %s", near, s)
	}
	return s
}
