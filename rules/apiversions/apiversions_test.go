package apiversions

import (
	"strings"
	"testing"

	_ "github.com/kilnhq/kiln/internal/golden"
	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules/internal/ruletest"
)

func TestFixtures(t *testing.T) { ruletest.CheckFixtures(t, Checker) }

func TestRuleDocs(t *testing.T) { ruletest.CheckRules(t, Checker) }

// TestTable pins entries of the migration guide that users hit most, so
// that an edit of apis.yaml cannot silently drop or shift them.
func TestTable(t *testing.T) {
	v := func(s string) manifest.KubeVersion {
		k, err := manifest.ParseKubeVersion(s)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	for _, tc := range []struct {
		apiVersion, kind, deprecated, removed, replacement string
	}{
		{"extensions/v1beta1", "Deployment", "1.8", "1.16", "apps/v1"},
		{"apps/v1beta1", "StatefulSet", "1.8", "1.16", "apps/v1"},
		{"apps/v1beta2", "DaemonSet", "1.9", "1.16", "apps/v1"},
		{"extensions/v1beta1", "NetworkPolicy", "1.9", "1.16", "networking.k8s.io/v1"},
		{"networking.k8s.io/v1beta1", "Ingress", "1.19", "1.22", "networking.k8s.io/v1"},
		{"extensions/v1beta1", "Ingress", "1.14", "1.22", "networking.k8s.io/v1"},
		{"admissionregistration.k8s.io/v1beta1", "ValidatingWebhookConfiguration", "1.16", "1.22", "admissionregistration.k8s.io/v1"},
		{"apiextensions.k8s.io/v1beta1", "CustomResourceDefinition", "1.16", "1.22", "apiextensions.k8s.io/v1"},
		{"rbac.authorization.k8s.io/v1beta1", "ClusterRoleBinding", "1.17", "1.22", "rbac.authorization.k8s.io/v1"},
		{"batch/v1beta1", "CronJob", "1.21", "1.25", "batch/v1"},
		{"policy/v1beta1", "PodDisruptionBudget", "1.21", "1.25", "policy/v1"},
		{"policy/v1beta1", "PodSecurityPolicy", "1.21", "1.25", "none: use Pod Security Admission"},
		{"autoscaling/v2beta1", "HorizontalPodAutoscaler", "1.22", "1.25", "autoscaling/v2"},
		{"autoscaling/v2beta2", "HorizontalPodAutoscaler", "1.23", "1.26", "autoscaling/v2"},
		{"flowcontrol.apiserver.k8s.io/v1beta1", "FlowSchema", "1.23", "1.26", "flowcontrol.apiserver.k8s.io/v1"},
		{"storage.k8s.io/v1beta1", "CSIStorageCapacity", "1.24", "1.27", "storage.k8s.io/v1"},
		{"flowcontrol.apiserver.k8s.io/v1beta2", "PriorityLevelConfiguration", "1.26", "1.29", "flowcontrol.apiserver.k8s.io/v1"},
		{"flowcontrol.apiserver.k8s.io/v1beta3", "FlowSchema", "1.29", "1.32", "flowcontrol.apiserver.k8s.io/v1"},
	} {
		a := index[[2]string{tc.apiVersion, tc.kind}]
		if a == nil {
			t.Errorf("%s %s: missing from apis.yaml", tc.apiVersion, tc.kind)
			continue
		}
		if a.Deprecated != v(tc.deprecated) || a.Removed != v(tc.removed) || !strings.HasPrefix(a.Replacement, tc.replacement) || a.Source != "" {
			t.Errorf("%s %s: got %+v, want deprecated %s removed %s replacement %s from the guide", tc.apiVersion, tc.kind, *a, tc.deprecated, tc.removed, tc.replacement)
		}
	}
	for _, a := range Table() {
		if a.Source != "" && a.Source != "k8s.io/api" && !strings.HasPrefix(a.Source, "k8s.io/api v0.") {
			t.Errorf("%s %s: unknown source %q", a.APIVersion, a.Kind, a.Source)
		}
		if manifest.LatestKube.Less(a.Deprecated) {
			t.Errorf("%s %s: deprecated in %s, after the newest release kiln knows", a.APIVersion, a.Kind, a.Deprecated)
		}
	}
}

func TestLoadErrors(t *testing.T) {
	for _, tc := range []struct{ name, data, want string }{
		{"not yaml", "apis: [", "yaml"},
		{"no replacement", `apis: [{apiVersion: a/v1, kind: K, deprecated: "1.20", removed: "1.22"}]`, "required"},
		{"duplicate", `apis: [{apiVersion: a/v1, kind: K, deprecated: "1.20", replacement: b}, {apiVersion: a/v1, kind: K, deprecated: "1.20", replacement: b}]`, "once per pair"},
		{"bad version", `apis: [{apiVersion: a/v1, kind: K, deprecated: "one", replacement: b}]`, "deprecated"},
		{"removed before deprecated", `apis: [{apiVersion: a/v1, kind: K, deprecated: "1.22", removed: "1.20", replacement: b}]`, "not after"},
	} {
		_, err := load([]byte(tc.data))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want one containing %q", tc.name, err, tc.want)
		}
	}
	if _, err := load([]byte(`apis: [{apiVersion: a/v1, kind: K, deprecated: "1.20", replacement: b}]`)); err != nil {
		t.Errorf("entry without removal: %v", err)
	}
}

func FuzzLoad(f *testing.F) {
	f.Add(apisYAML)
	f.Add([]byte(`apis: [{apiVersion: a/v1, kind: K, deprecated: "1.20", removed: "1.22", replacement: b}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		table, err := load(data)
		if err != nil {
			return
		}
		for _, a := range table {
			if a.Removed != (manifest.KubeVersion{}) && !a.Deprecated.Less(a.Removed) {
				t.Fatalf("accepted %+v", a)
			}
		}
	})
}
