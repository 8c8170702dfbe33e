package compiler

import (
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// deployment emits the apps/v1 Deployment of a service.
func (e *emitter) deployment(name string, s *Service) *yaml.Node {
	path := "spec.services." + name
	p := e.at(path)
	ps := podSource{
		path:     path,
		init:     append(indexed(path, "init", s.Init, false), indexed(path, "sidecars", s.Sidecars, true)...),
		security: s.Security,
		pod:      s.Pod,
		spread:   e.selector(name),
		// A config change rolls the pods; JobSets get no hash, since the
		// JobSet webhook refuses changes to a running one's templates.
		configs: configsRead(s.Init, s.Sidecars, s.Containers),
	}
	ps.shm = s.SHM
	ps.containers = indexed(path, "containers", s.Containers, false)
	// Service ports become container ports of the first container, unless a
	// container (or sidecar) declares a port of that name itself.
	for _, port := range sortedKeys(s.Ports) {
		if declaresPort(s, port) {
			continue
		}
		ps.containers[0].ports = append(ps.containers[0].ports, portSource{port, s.Ports[port], e.at(sub(path+".ports", port))})
	}
	spec := mapping(p)
	if s.Autoscale == nil {
		// An autoscaled Deployment has no replicas: the HPA sets them, and a
		// GitOps sync of a fixed count would fight it.
		add(spec, field{"replicas", num(e.at(path+".replicas"), s.Replicas)})
	}
	add(spec,
		field{"selector", mapping(p, field{"matchLabels", stringMap(p, e.selector(name))})},
		field{"template", e.podTemplate(name, ps)},
	)
	return object(p, "apps/v1", "Deployment", e.metadata(p, name, true, nil), spec)
}

func declaresPort(s *Service, name string) bool {
	for _, cs := range [][]*Container{s.Sidecars, s.Containers} {
		for _, c := range cs {
			if _, ok := c.Ports[name]; ok {
				return true
			}
		}
	}
	return false
}

// serviceObject emits the v1 Service of a service with ports (nil without).
func (e *emitter) serviceObject(name string, s *Service) *yaml.Node {
	if len(s.Ports) == 0 {
		return nil
	}
	path := "spec.services." + name
	p := e.at(path)
	pp := e.at(path + ".ports")
	var ports []*yaml.Node
	for _, port := range sortedKeys(s.Ports) {
		at := e.at(sub(path+".ports", port))
		ports = append(ports, mapping(at,
			field{"name", str(at, port)},
			field{"port", num(at, s.Ports[port])},
			field{"protocol", str(at, "TCP")},
			field{"targetPort", str(at, port)},
		))
	}
	spec := mapping(p,
		field{"selector", stringMap(p, e.selector(name))},
		field{"ports", seq(pp, ports...)},
	)
	return object(p, "v1", "Service", e.metadata(p, name, true, nil), spec)
}
