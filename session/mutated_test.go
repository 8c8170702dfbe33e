package session

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kilnhq/kiln/session/settings"
)

// TestShowMutated builds an App beside a MutatingAdmissionPolicy that labels
// Deployments: WriteAdmitted prints the Deployment as admitted (mutated and
// defaulted), the build's own output (the compiled objects) stays as
// compiled, and --no-lint cannot show what was never admitted.
func TestShowMutated(t *testing.T) {
	dir := t.TempDir()
	app := "apiVersion: kiln.dev/v1alpha1\nkind: App\nmetadata: {name: shop, namespace: shop}\nspec:\n  services:\n    web:\n      containers: [{name: app, image: ghcr.io/acme/shop:1.4.2}]\n"
	policy := `apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicy
metadata: {name: default-team}
spec:
  matchConstraints:
    resourceRules: [{apiGroups: [apps], apiVersions: [v1], operations: [CREATE], resources: [deployments]}]
  failurePolicy: Fail
  reinvocationPolicy: Never
  mutations:
    - patchType: ApplyConfiguration
      applyConfiguration:
        expression: 'Object{metadata: Object.metadata{labels: {"team": "platform"}}}'
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicyBinding
metadata: {name: default-team}
spec: {policyName: default-team}
`
	for name, data := range map[string]string{"app.yaml": app, "policy.yaml": policy} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s, err := New(&settings.Settings{}, []string{dir}, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Build([]string{dir}, BuildOptions{ShowMutated: true})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := WriteAdmitted(&out, b.Compiled); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"kind: Deployment", "team: platform", "revisionHistoryLimit: 10"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("admitted objects lack %q:\n%s", want, out.String())
		}
	}
	for _, f := range b.Files {
		if strings.Contains(string(f), "team: platform") {
			t.Errorf("the compiled files carry the mutation:\n%s", f)
		}
	}
	if _, err := s.Build([]string{dir}, BuildOptions{ShowMutated: true, NoLint: true}); err == nil {
		t.Error("--show-mutated with --no-lint: no error")
	}
}

// TestPlanPSAMutated: kiln psa plan judges Pods as mutating admission
// leaves them, as kiln lint does: the hardening policy makes the Pod in
// the opted-in namespace pass restricted; the same Pod elsewhere does not.
func TestPlanPSAMutated(t *testing.T) {
	// kiln's own fixture, judged with kiln's defaults: the repository's
	// .kiln.yaml leaves testdata out.
	none := filepath.Join(t.TempDir(), ".kiln.yaml")
	if err := os.WriteFile(none, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := New(&settings.Settings{Config: none}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.PlanPSA([]string{"../admit/mutate/testdata/harden.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, ns := range p.Plan.Namespaces {
		got[ns.Name] = ns.Level
	}
	if got["shop"] != "restricted" || got["legacy"] != "baseline" {
		t.Errorf("levels %v, want shop restricted, legacy baseline", got)
	}
}
