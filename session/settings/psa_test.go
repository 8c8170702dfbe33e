package settings

import (
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// TestPSANamespaces: psa.namespaces gives namespaces the input does not
// declare their pod-security labels: a level alone is enforce, version
// applies to every mode the entry sets without its own, psa.version to the
// rest; every mistake is an error at its line.
func TestPSANamespaces(t *testing.T) {
	const (
		enforce, enforceV = "pod-security.kubernetes.io/enforce", "pod-security.kubernetes.io/enforce-version"
		warn, warnV       = "pod-security.kubernetes.io/warn", "pod-security.kubernetes.io/warn-version"
		audit             = "pod-security.kubernetes.io/audit"
	)
	good := []struct {
		name, in string
		want     map[string]map[string]string
	}{
		{"a level alone is enforce", "psa:\n  namespaces:\n    monitoring: privileged\n",
			map[string]map[string]string{"monitoring": {enforce: "privileged"}}},
		{"modes and version", "psa:\n  namespaces:\n    apps: {enforce: baseline, warn: restricted, version: v1.31}\n",
			map[string]map[string]string{"apps": {enforce: "baseline", enforceV: "v1.31", warn: "restricted", warnV: "v1.31"}}},
		{"a mode's own version beats version", "psa:\n  namespaces:\n    apps: {enforce: baseline, enforce-version: v1.30, warn: restricted, version: v1.31}\n",
			map[string]map[string]string{"apps": {enforce: "baseline", enforceV: "v1.30", warn: "restricted", warnV: "v1.31"}}},
		{"psa.version for the modes without one", "psa:\n  version: v1.29\n  namespaces:\n    apps: {enforce: baseline, warn: restricted, warn-version: latest}\n    logs: {audit: restricted}\n",
			map[string]map[string]string{"apps": {enforce: "baseline", enforceV: "v1.29", warn: "restricted", warnV: "latest"},
				"logs": {audit: "restricted", "pod-security.kubernetes.io/audit-version": "v1.29"}}},
		{"none", "psa: {level: baseline}\n", nil},
	}
	for _, tt := range good {
		t.Run(tt.name, func(t *testing.T) {
			s, err := parse(".kiln.yaml", []byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if got := s.Options().PSANamespaces; !reflect.DeepEqual(got, tt.want) {
				t.Errorf("PSANamespaces = %v, want %v", got, tt.want)
			}
		})
	}
	bad := []struct{ name, in, want string }{
		{"unknown level", "psa:\n  namespaces:\n    apps: strict\n",
			`.kiln.yaml:3:11: psa.namespaces.apps: "strict" is not a Pod Security level: use privileged, baseline or restricted`},
		{"unknown level in a mode", "psa:\n  namespaces:\n    apps:\n      warn: loud\n",
			`.kiln.yaml:4:13: psa.namespaces.apps.warn: "loud" is not a Pod Security level`},
		{"bad version", "psa:\n  namespaces:\n    apps: {enforce: baseline, version: \"1.31\"}\n",
			`.kiln.yaml:3:40: psa.namespaces.apps.version: "1.31" is not a Pod Security version: use latest or v1.N`},
		{"bad mode version", "psa:\n  namespaces:\n    apps: {enforce: baseline, enforce-version: v2}\n",
			`.kiln.yaml:3:48: psa.namespaces.apps.enforce-version: "v2" is not a Pod Security version`},
		{"misspelled key", "psa:\n  namespaces:\n    apps: {enfroce: baseline}\n",
			`.kiln.yaml:3:12: psa.namespaces.apps: unknown key "enfroce" (known: enforce, audit, warn, enforce-version, audit-version, warn-version, version)`},
		{"no level", "psa:\n  namespaces:\n    apps: {version: v1.31}\n",
			`.kiln.yaml:3:11: psa.namespaces.apps sets no level: give enforce, audit or warn`},
		{"not a namespace name", "psa:\n  namespaces:\n    kube_system: privileged\n",
			`.kiln.yaml:3:5: psa.namespaces: "kube_system" is not a namespace name`},
		{"a list", "psa:\n  namespaces:\n    apps: [baseline]\n",
			`.kiln.yaml:3:11: psa.namespaces.apps must be a level (privileged, baseline or restricted) or a mapping`},
		{"a mapping value", "psa:\n  namespaces:\n    apps: {enforce: {level: baseline}}\n",
			`.kiln.yaml:3:21: psa.namespaces.apps.enforce must be a string`},
		{"namespaces not a mapping", "psa:\n  namespaces: [apps]\n",
			`.kiln.yaml:2:15: psa.namespaces must be a mapping`},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parse(".kiln.yaml", []byte(tt.in))
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("error = %v, want prefix %q", err, tt.want)
			}
		})
	}
}

// TestPSANamespacesFromSpec: a KRM functionConfig gives the same setting
// as spec.psaNamespaces, through the same decoder.
func TestPSANamespacesFromSpec(t *testing.T) {
	spec, err := yaml.Parse("psaNamespaces: {monitoring: privileged}\n")
	if err != nil {
		t.Fatal(err)
	}
	s, err := FromSpec(spec.YNode())
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Options().PSANamespaces["monitoring"]["pod-security.kubernetes.io/enforce"]; got != "privileged" {
		t.Errorf("monitoring enforce = %q, want privileged", got)
	}
	spec, _ = yaml.Parse("psaNamespaces: {monitoring: loud}\n")
	if _, err := FromSpec(spec.YNode()); err == nil || !strings.Contains(err.Error(), `spec.psaNamespaces: psa.namespaces.monitoring: "loud" is not a Pod Security level`) {
		t.Errorf("error = %v", err)
	}
}
