package apiversions

import (
	"reflect"
	"strings"
	"testing"

	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules"
)

// TestAPIRewritesInTable checks every rewrite against the api/… rules'
// table (the old version is removed and the table names the same
// replacement) and the served-versions table (the newest release serves
// the replacement).
func TestAPIRewritesInTable(t *testing.T) {
	table := map[[2]string]API{}
	for _, a := range Table() {
		table[[2]string{a.APIVersion, a.Kind}] = a
	}
	for _, r := range apiRewrites {
		a, ok := table[[2]string{r.from, r.kind}]
		if !ok {
			t.Errorf("%s %s is not in the apiversions table", r.from, r.kind)
			continue
		}
		if a.Removed == (manifest.KubeVersion{}) {
			t.Errorf("%s %s: the table schedules no removal", r.from, r.kind)
		}
		if !strings.HasPrefix(a.Replacement, r.to) {
			t.Errorf("%s %s: rewrite to %s, the table says %q", r.from, r.kind, r.to, a.Replacement)
		}
		if !servedAt(r.to, r.kind, manifest.LatestKube) {
			t.Errorf("%s %s: %s is not served by %s", r.from, r.kind, r.to, manifest.LatestKube)
		}
	}
}

func TestRewriteFix(t *testing.T) {
	latest := manifest.LatestKube
	tests := []struct {
		apiVersion, kind string
		kube             manifest.KubeVersion
		want             *rules.Fix
	}{
		{"rbac.authorization.k8s.io/v1beta1", "Role", latest, &rules.Fix{Action: rules.FixAPIVersion, APIVersion: "rbac.authorization.k8s.io/v1"}},
		{"batch/v1beta1", "CronJob", manifest.KubeVersion{Major: 1, Minor: 20}, nil},                           // batch/v1 not served yet
		{"extensions/v1beta1", "Deployment", latest, nil},                                                      // apps/v1 changes the schema
		{"flowcontrol.apiserver.k8s.io/v1beta2", "FlowSchema", manifest.KubeVersion{Major: 1, Minor: 28}, nil}, // v1 not served before 1.29
		{"flowcontrol.apiserver.k8s.io/v1beta2", "FlowSchema", manifest.KubeVersion{Major: 1, Minor: 29}, &rules.Fix{Action: rules.FixAPIVersion, APIVersion: "flowcontrol.apiserver.k8s.io/v1"}},
	}
	for _, tt := range tests {
		if got := rewriteFix(tt.apiVersion, tt.kind, tt.kube); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s %s at %s: got %+v, want %+v", tt.apiVersion, tt.kind, tt.kube, got, tt.want)
		}
	}
}
