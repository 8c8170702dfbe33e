package compiler

import "sigs.k8s.io/kustomize/kyaml/yaml"

// psaLabelPrefix prefixes the Pod Security Admission namespace labels.
const psaLabelPrefix = "pod-security.kubernetes.io/"

// namespace emits the Namespace when spec.namespace is set, with the labels
// of spec.namespace.labels (over metadata.labels) and a
// pod-security.kubernetes.io/<mode> and <mode>-version label for each mode
// given in spec.namespace.security (version defaults to latest; validate
// keeps the two label sets apart).
func (e *emitter) namespace() *yaml.Node {
	ns := e.app.Spec.Namespace
	if ns == nil {
		return nil
	}
	p := e.at("spec.namespace")
	labels := map[string]string{}
	for k, v := range ns.Labels {
		labels[k] = v
	}
	if s := ns.Security; s != nil {
		p = e.at("spec.namespace.security")
		version := s.Version
		if version == "" {
			version = "latest"
		}
		for _, m := range []struct{ mode, level string }{{"enforce", s.Enforce}, {"audit", s.Audit}, {"warn", s.Warn}} {
			if m.level != "" {
				labels[psaLabelPrefix+m.mode] = m.level
				labels[psaLabelPrefix+m.mode+"-version"] = version
			}
		}
	}
	return mapping(p,
		field{"apiVersion", str(p, "v1")},
		field{"kind", str(p, "Namespace")},
		field{"metadata", e.metadata(p, e.app.Metadata.Namespace, false, labels)},
	)
}
