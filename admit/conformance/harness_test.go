package conformance

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules"
)

// The harness's own parts, without a server.

func TestAssumedLevels(t *testing.T) {
	for _, tc := range []struct {
		level string // --psa-level ("": kiln's default)
		want  string
	}{
		{"", "restricted"},
		{"restricted", "restricted"},
		{"baseline", "baseline"},
		{"privileged", "privileged"},
	} {
		opts := rules.DefaultOptions()
		if tc.level != "" {
			opts.PSALevel = tc.level
		}
		got := assumedLevels(t, opts, []string{"default", "kube-system", "shop"})
		// kube-system is privileged as a cluster leaves it, whatever
		// --psa-level assumes for the user's own namespaces.
		want := map[string]string{"default": tc.want, "kube-system": "privileged", "shop": tc.want}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("--psa-level %q: got %v, want %v", tc.level, got, want)
		}
	}
}

func TestWithClaimVolumes(t *testing.T) {
	claim := func(name string) any {
		return map[string]any{"name": name, "persistentVolumeClaim": map[string]any{"claimName": name + "-0"}}
	}
	for _, tc := range []struct {
		name    string
		volumes []any // the template's
		want    []any
	}{
		{"added", []any{map[string]any{"name": "tmp", "emptyDir": map[string]any{}}},
			[]any{map[string]any{"name": "tmp", "emptyDir": map[string]any{}}, claim("data")}},
		{"replaces the template's volume of its name", []any{map[string]any{"name": "data", "emptyDir": map[string]any{}}},
			[]any{claim("data")}},
		{"no volumes", nil, []any{claim("data")}},
	} {
		raw := map[string]any{"spec": map[string]any{"volumeClaimTemplates": []any{map[string]any{"metadata": map[string]any{"name": "data"}}}}}
		spec := map[string]any{}
		if tc.volumes != nil {
			spec["volumes"] = tc.volumes
		}
		got := withClaimVolumes(raw, spec)["volumes"]
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestKilnVerdictOf(t *testing.T) {
	finding := func(rule string, sev rules.Severity) rules.Finding { return rules.Finding{Rule: rule, Severity: sev} }
	pod := &manifest.Object{APIVersion: "v1", Kind: "Pod"}
	deployment := &manifest.Object{APIVersion: "apps/v1", Kind: "Deployment"}
	binding := &manifest.Object{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingAdmissionPolicyBinding"}
	for _, tc := range []struct {
		name string
		obj  *manifest.Object
		fs   []rules.Finding
		want kilnVerdict // detail and own compared by count
	}{
		{"schema error: refused", deployment, []rules.Finding{finding("schema/invalid", rules.Error)}, kilnVerdict{verdict: verdict{rejected: true}}},
		{"api/removed: refused", deployment, []rules.Finding{finding("api/removed", rules.Error)}, kilnVerdict{verdict: verdict{rejected: true}}},
		{"server warning", deployment, []rules.Finding{finding("schema/server-warning", rules.Warning)}, kilnVerdict{verdict: verdict{warn: true}}},
		{"Pod Security error on a Pod: denied, no warning", pod, []rules.Finding{finding("psa/privileged", rules.Error)}, kilnVerdict{verdict: verdict{denied: true}}},
		{"Pod Security error on a workload: warned, its Pods denied", deployment, []rules.Finding{finding("psa/privileged", rules.Error)}, kilnVerdict{verdict: verdict{psaWarn: true}, psaDenied: true}},
		{"Pod Security warning", deployment, []rules.Finding{finding("psa/privileged", rules.Warning)}, kilnVerdict{verdict: verdict{psaWarn: true}}},
		{"policy Deny", deployment, []rules.Finding{finding("policy/replicas", rules.Error)}, kilnVerdict{verdict: verdict{denied: true}}},
		{"policy Warn", deployment, []rules.Finding{finding("policy/replicas", rules.Warning)}, kilnVerdict{verdict: verdict{polWarn: true}}},
		{"kiln's report on a binding is no policy verdict", binding, []rules.Finding{finding("policy/missing", rules.Warning)}, kilnVerdict{}},
		{"own rule", deployment, []rules.Finding{finding("storage/rwx-unsupported", rules.Error)}, kilnVerdict{own: make([]rules.Finding, 1)}},
		{"own rule's warning", deployment, []rules.Finding{finding("object/duplicate", rules.Warning)}, kilnVerdict{}},
		{"info", deployment, []rules.Finding{finding("schema/no-crd", rules.Info)}, kilnVerdict{}},
	} {
		got := kilnVerdictOf(tc.obj, tc.fs)
		if len(got.own) != len(tc.want.own) {
			t.Errorf("%s: %d own-rule errors, want %d", tc.name, len(got.own), len(tc.want.own))
		}
		got.detail, got.psaDetail, got.own, tc.want.own = "", "", nil, nil
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: got %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

func TestCRDKinds(t *testing.T) {
	var raw map[string]any
	crd := `{"kind":"CustomResourceDefinition","spec":{"group":"example.com","names":{"kind":"Widget"},
		"versions":[{"name":"v1","served":true},{"name":"v1beta1","served":false},{"name":"v2","served":true}]}}`
	if err := json.Unmarshal([]byte(crd), &raw); err != nil {
		t.Fatal(err)
	}
	want := [][2]string{{"example.com/v1", "Widget"}, {"example.com/v2", "Widget"}}
	if got := crdKinds(raw); !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if got := crdKinds(map[string]any{"kind": "ConfigMap"}); got != nil {
		t.Errorf("a ConfigMap: got %v, want none", got)
	}
}
