package settings

import (
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/pod-security-admission/api"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// psaModes are the Pod Security modes, as the keys of a psa.namespaces
// entry name them (the pod-security.kubernetes.io/ label without its prefix).
var psaModes = []string{"enforce", "audit", "warn"}

// psaNamespaceKeys lists the keys of a psa.namespaces entry, for messages.
const psaNamespaceKeys = "enforce, audit, warn, enforce-version, audit-version, warn-version, version"

// applyPSANamespaces reads psa.namespaces: for namespaces the input does not
// declare, the pod-security.kubernetes.io labels to judge them with, as if
// their Namespace carried them.
//
//	psa:
//	  namespaces:
//	    monitoring: privileged                        # enforce: privileged
//	    apps: {enforce: baseline, version: v1.31}     # version: of every mode set here
//	    batch: {enforce: baseline, warn: restricted, warn-version: latest}
func applyPSANamespaces(s *Settings, a Assignment, v value) error {
	m := a.Value
	if s.PSANamespaces == nil {
		s.PSANamespaces = map[string]map[string]string{}
	}
	for j := 0; j+1 < len(m.Content); j += 2 {
		k, x := m.Content[j], m.Content[j+1]
		what := "psa.namespaces." + k.Value
		if errs := validation.IsDNS1123Label(k.Value); len(errs) > 0 {
			return a.at(k).errorf("psa.namespaces: %q is not a namespace name: %s", k.Value, strings.Join(errs, "; "))
		}
		labels := map[string]string{}
		switch x.Kind {
		case yaml.ScalarNode:
			if err := checkLevel(a.at(x), what, x.Value); err != nil {
				return err
			}
			labels[api.EnforceLevelLabel] = x.Value
		case yaml.MappingNode:
			version := ""
			for i := 0; i+1 < len(x.Content); i += 2 {
				kk, vv := x.Content[i], x.Content[i+1]
				key := what + "." + kk.Value
				if vv.Kind != yaml.ScalarNode {
					return a.at(vv).errorf("%s must be a string", key)
				}
				mode, isVersion := strings.CutSuffix(kk.Value, "-version")
				switch {
				case kk.Value == "version":
					if err := checkVersion(a.at(vv), key, vv.Value); err != nil {
						return err
					}
					version = vv.Value
				case isVersion && isMode(mode):
					if err := checkVersion(a.at(vv), key, vv.Value); err != nil {
						return err
					}
					labels[modeLabel(mode)+"-version"] = vv.Value
				case isMode(kk.Value):
					if err := checkLevel(a.at(vv), key, vv.Value); err != nil {
						return err
					}
					labels[modeLabel(kk.Value)] = vv.Value
				default:
					return a.at(kk).errorf("%s: unknown key %q (known: %s)", what, kk.Value, psaNamespaceKeys)
				}
			}
			set := false
			for _, mode := range psaModes {
				if _, ok := labels[modeLabel(mode)]; !ok {
					continue
				}
				set = true
				if _, ok := labels[modeLabel(mode)+"-version"]; !ok && version != "" {
					labels[modeLabel(mode)+"-version"] = version
				}
			}
			if !set {
				return a.at(x).errorf("%s sets no level: give enforce, audit or warn (privileged, baseline or restricted)", what)
			}
		default:
			return a.at(x).errorf("%s must be a level (privileged, baseline or restricted) or a mapping (keys: %s)", what, psaNamespaceKeys)
		}
		s.PSANamespaces[k.Value] = labels
	}
	return nil
}

func isMode(s string) bool {
	for _, m := range psaModes {
		if s == m {
			return true
		}
	}
	return false
}

// modeLabel is the level label of a mode (api.EnforceLevelLabel, …); its
// version label adds "-version".
func modeLabel(mode string) string { return "pod-security.kubernetes.io/" + mode }

func checkLevel(a Assignment, what, level string) error {
	if _, err := api.ParseLevel(level); err != nil {
		return a.errorf("%s: %q is not a Pod Security level: use privileged, baseline or restricted", what, level)
	}
	return nil
}

func checkVersion(a Assignment, what, version string) error {
	if _, err := api.ParseVersion(version); err != nil {
		return a.errorf("%s: %q is not a Pod Security version: use latest or v1.N (v1.31)", what, version)
	}
	return nil
}

// psaNamespaces returns the labels of psa.namespaces for the engine: a mode
// set without a version gets psa.version's (--psa-version), when one is set.
func (s *Settings) psaNamespaces() map[string]map[string]string {
	if len(s.PSANamespaces) == 0 {
		return nil
	}
	out := make(map[string]map[string]string, len(s.PSANamespaces))
	for name, labels := range s.PSANamespaces {
		l := make(map[string]string, len(labels)+len(psaModes))
		for k, v := range labels {
			l[k] = v
		}
		for _, mode := range psaModes {
			_, hasLevel := l[modeLabel(mode)]
			if _, hasVersion := l[modeLabel(mode)+"-version"]; hasLevel && !hasVersion && s.PSAVersion != "" {
				l[modeLabel(mode)+"-version"] = s.PSAVersion
			}
		}
		out[name] = l
	}
	return out
}
