package compiler

import (
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// autoscaler emits the autoscaling/v2 HorizontalPodAutoscaler of an
// autoscaled service (nil without autoscale): it scales the service's
// Deployment between min and max on the utilisation targets given.
func (e *emitter) autoscaler(name string, s *Service) *yaml.Node {
	if s.Autoscale == nil {
		return nil
	}
	path := "spec.services." + name + ".autoscale"
	p := e.at(path)
	as := s.Autoscale
	var metrics []*yaml.Node
	for _, m := range []struct {
		resource string
		target   *int
	}{{"cpu", as.CPU}, {"memory", as.Memory}} {
		if m.target == nil {
			continue
		}
		mp := e.at(path + "." + m.resource)
		metrics = append(metrics, mapping(mp,
			field{"type", str(mp, "Resource")},
			field{"resource", mapping(mp,
				field{"name", str(mp, m.resource)},
				field{"target", mapping(mp, field{"type", str(mp, "Utilization")}, field{"averageUtilization", num(mp, *m.target)})},
			)},
		))
	}
	spec := mapping(p,
		field{"scaleTargetRef", mapping(p, field{"apiVersion", str(p, "apps/v1")}, field{"kind", str(p, "Deployment")}, field{"name", str(p, name)})},
		field{"minReplicas", num(e.at(path+".min"), as.Min)},
		field{"maxReplicas", num(e.at(path+".max"), as.Max)},
		field{"metrics", seq(p, metrics...)},
	)
	return object(p, "autoscaling/v2", "HorizontalPodAutoscaler", e.metadata(p, name, true, nil), spec)
}

// disruptionBudget emits the policy/v1 PodDisruptionBudget of a service
// with disruption (nil without), selecting the service's pods.
func (e *emitter) disruptionBudget(name string, s *Service) *yaml.Node {
	d := s.Disruption
	if d == nil {
		return nil
	}
	path := "spec.services." + name + ".disruption"
	p := e.at(path)
	spec := mapping(p)
	if d.MinAvailable != nil {
		add(spec, field{"minAvailable", intOrPercent(e.at(path+".minAvailable"), *d.MinAvailable)})
	}
	if d.MaxUnavailable != nil {
		add(spec, field{"maxUnavailable", intOrPercent(e.at(path+".maxUnavailable"), *d.MaxUnavailable)})
	}
	add(spec, field{"selector", mapping(p, field{"matchLabels", stringMap(p, e.selector(name))})})
	return object(p, "policy/v1", "PodDisruptionBudget", e.metadata(p, name, true, nil), spec)
}

func intOrPercent(p pos, v IntOrPercent) *yaml.Node {
	if v.Percent {
		return str(p, v.String())
	}
	return num(p, v.N)
}

// floorReplicas is the fewest replicas a service runs with: autoscale.min
// when autoscaled, else replicas.
func floorReplicas(s *Service) int {
	if s.Autoscale != nil {
		return s.Autoscale.Min
	}
	return s.Replicas
}

// budgetAllows is how many of n pods the budget lets a drain evict, the way
// the disruption controller counts (k8s.io/kubernetes pkg/controller/disruption:
// a percentage of minAvailable rounds up, of maxUnavailable too).
func budgetAllows(d *Disruption, n int) int {
	ceilPct := func(v IntOrPercent) int {
		if !v.Percent {
			return v.N
		}
		return (v.N*n + 99) / 100
	}
	if d.MinAvailable != nil {
		return n - ceilPct(*d.MinAvailable)
	}
	if d.MaxUnavailable != nil {
		return ceilPct(*d.MaxUnavailable)
	}
	return n
}
