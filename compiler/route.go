package compiler

import (
	"net"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// What routes compile to (target.ingress).
const (
	routeGateway = "gateway"
	routeIngress = "ingress"
)

// ingressMode is target.ingress with its default.
func (a *App) ingressMode() string {
	if a.Spec.Target.Ingress == "" {
		return routeGateway
	}
	return a.Spec.Target.Ingress
}

// routeName is the name of a route's HTTPRoute or Ingress.
func routeName(service, route string) string { return service + "-" + route }

// routePaths are a route's path prefixes, / when none are given.
func routePaths(r *Route) []string {
	if len(r.Paths) == 0 {
		return []string{"/"}
	}
	return r.Paths
}

// routePort is the service port a route sends traffic to: the one named, or
// the service's only port.
func routePort(s *Service, r *Route) string {
	if r.Port != "" || len(s.Ports) != 1 {
		return r.Port
	}
	return sortedKeys(s.Ports)[0]
}

// routes emits the HTTPRoutes (or Ingresses) of a service, by route key.
func (e *emitter) routes(name string, s *Service) []*yaml.Node {
	var out []*yaml.Node
	for _, key := range sortedKeys(s.Routes) {
		if e.app.ingressMode() == routeIngress {
			out = append(out, e.ingress(name, key, s))
		} else {
			out = append(out, e.httpRoute(name, key, s))
		}
	}
	return out
}

// httpRoute emits a gateway.networking.k8s.io/v1 HTTPRoute attached to
// target.gateway: the host, one rule matching the path prefixes, sending to
// the service's port.
func (e *emitter) httpRoute(service, key string, s *Service) *yaml.Node {
	path := sub("spec.services."+service+".routes", key)
	p := e.at(path)
	r := s.Routes[key]
	g := e.app.Spec.Target.Gateway
	gp := e.at("spec.target.gateway")
	parent := mapping(gp, field{"name", str(e.at("spec.target.gateway.name"), g.Name)})
	if g.Namespace != "" {
		add(parent, field{"namespace", str(e.at("spec.target.gateway.namespace"), g.Namespace)})
	}
	if g.Listener != "" {
		add(parent, field{"sectionName", str(e.at("spec.target.gateway.listener"), g.Listener)})
	}
	pp := e.at(path + ".paths")
	var matches []*yaml.Node
	for _, prefix := range routePaths(r) {
		matches = append(matches, mapping(pp, field{"path", mapping(pp, field{"type", str(pp, "PathPrefix")}, field{"value", str(pp, prefix)})}))
	}
	port := routePort(s, r)
	portAt := e.at(sub("spec.services."+service+".ports", port))
	spec := mapping(p,
		field{"parentRefs", seq(gp, parent)},
		field{"hostnames", seq(e.at(path+".host"), str(e.at(path+".host"), r.Host))},
		field{"rules", seq(p, mapping(p,
			field{"matches", seq(pp, matches...)},
			field{"backendRefs", seq(portAt, mapping(portAt, field{"name", str(p, service)}, field{"port", num(portAt, s.Ports[port])}))},
		))},
	)
	return object(p, "gateway.networking.k8s.io/v1", "HTTPRoute", e.metadata(p, routeName(service, key), true, nil), spec)
}

// ingress emits a networking.k8s.io/v1 Ingress: the host, a Prefix path for
// each prefix to the service's port by name, and TLS with the route's Secret.
func (e *emitter) ingress(service, key string, s *Service) *yaml.Node {
	path := sub("spec.services."+service+".routes", key)
	p := e.at(path)
	r := s.Routes[key]
	hp := e.at(path + ".host")
	pp := e.at(path + ".paths")
	port := routePort(s, r)
	portAt := e.at(sub("spec.services."+service+".ports", port))
	var paths []*yaml.Node
	for _, prefix := range routePaths(r) {
		paths = append(paths, mapping(pp,
			field{"path", str(pp, prefix)},
			field{"pathType", str(pp, "Prefix")},
			field{"backend", mapping(portAt, field{"service", mapping(portAt,
				field{"name", str(p, service)},
				field{"port", mapping(portAt, field{"name", str(portAt, port)})},
			)})},
		))
	}
	spec := mapping(p)
	if c := e.app.Spec.Target.IngressClass; c != "" {
		add(spec, field{"ingressClassName", str(e.at("spec.target.ingressClass"), c)})
	}
	if r.TLS != nil {
		tp := e.at(path + ".tls")
		add(spec, field{"tls", seq(tp, mapping(tp,
			field{"hosts", seq(hp, str(hp, r.Host))},
			field{"secretName", str(e.at(path+".tls.secret"), r.TLS.Secret)},
		))})
	}
	add(spec, field{"rules", seq(p, mapping(p,
		field{"host", str(hp, r.Host)},
		field{"http", mapping(pp, field{"paths", seq(pp, paths...)})},
	))})
	return object(p, "networking.k8s.io/v1", "Ingress", e.metadata(p, routeName(service, key), true, nil), spec)
}

// Path sequences the API server refuses in a Prefix path of an Ingress
// (k8s.io/kubernetes pkg/apis/networking/validation, invalidPathSequences)
// and the Gateway API CRD's CEL rules refuse in an HTTPRoute PathPrefix.
var (
	badPathSequences = []string{"//", "/./", "/../", "%2f", "%2F", "#"}
	badPathSuffixes  = []string{"/..", "/."}
)

// routes checks a service's routes: a port to send to, a Gateway or an
// Ingress to compile to, paths and hosts the API server accepts, names
// no other route takes.
func (c *checker) routes(a *App, name string, s *Service, names map[string]string) {
	path := "spec.services." + name
	for _, key := range sortedKeys(s.Routes) {
		r := s.Routes[key]
		rp := sub(path+".routes", key)
		if prev, dup := names[routeName(name, key)]; dup {
			c.errorf(rp, "route %q of service %q compiles to an object named %q, as %s does; rename one", key, name, routeName(name, key), prev)
		}
		names[routeName(name, key)] = rp
		switch {
		case len(s.Ports) == 0:
			c.errorf(rp, "a route sends traffic to the service's Service, and service %q declares no ports; add ports (e.g. ports: {http: 8080})", name)
		case r.Port == "" && len(s.Ports) > 1:
			c.errorf(rp, "service %q has several ports (%s): name the one this route sends to with port", name, strings.Join(sortedKeys(s.Ports), ", "))
		case r.Port != "":
			if _, ok := s.Ports[r.Port]; !ok {
				c.errorf(rp+".port", "port %q is not a port of service %q; its ports: %s", r.Port, name, strings.Join(sortedKeys(s.Ports), ", "))
			}
		}
		if net.ParseIP(r.Host) != nil {
			c.errorf(rp+".host", "host %s is an IP address; a route matches a hostname (the HTTP Host header): give a DNS name", r.Host)
		}
		for i, prefix := range r.Paths {
			for _, bad := range badPathSequences {
				if strings.Contains(prefix, bad) {
					c.errorf(rp+".paths["+itoa(i)+"]", "path %q contains %q, which the API server refuses in a path prefix; write the path without it", prefix, bad)
				}
			}
			for _, bad := range badPathSuffixes {
				if strings.HasSuffix(prefix, bad) {
					c.errorf(rp+".paths["+itoa(i)+"]", "path %q ends with %q, which the API server refuses in a path prefix", prefix, bad)
				}
			}
		}
		if a.ingressMode() == routeGateway {
			if a.Spec.Target.Gateway == nil {
				c.errorf(rp, "routes compile to HTTPRoutes attached to a Gateway: name it in target.gateway ({name: NAME, namespace: NS}), or compile to Ingresses with target.ingress: ingress")
			}
			if r.TLS != nil {
				c.errorf(rp+".tls", "with a Gateway, TLS is the Gateway listener's certificate, not the route's: remove tls (and set target.gateway.listener to the HTTPS listener), or compile to Ingresses with target.ingress: ingress")
			}
		}
	}
}

// routeTarget checks that the target's route settings fit target.ingress.
func (c *checker) routeTarget(a *App) {
	t := a.Spec.Target
	if a.ingressMode() == routeIngress && t.Gateway != nil {
		c.warnf("spec.target.gateway", "target.gateway is where HTTPRoutes attach, and target.ingress is ingress (routes compile to Ingresses), so it is not used; remove one")
	}
	if a.ingressMode() == routeGateway && t.IngressClass != "" {
		c.errorf("spec.target.ingressClass", "target.ingressClass is the class of Ingresses, and routes compile to HTTPRoutes (target.ingress is gateway, the default); set target.ingress: ingress or remove ingressClass")
	}
}
