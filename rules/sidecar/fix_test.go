package sidecar

import (
	"reflect"
	"testing"

	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules"
)

func TestNativeSidecarFix(t *testing.T) {
	job := "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec:\n  template:\n    spec:\n      containers: [{name: a, image: x}, {name: p, image: envoyproxy/envoy}]\n"
	jobset := "apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata: {name: s}\nspec:\n  replicatedJobs:\n  - name: w\n    template:\n      spec:\n        template:\n          spec:\n            containers: [{name: a, image: x}, {name: p, image: envoyproxy/envoy}]\n"
	latest, old := manifest.LatestKube, manifest.KubeVersion{Major: 1, Minor: 28}
	tests := []struct {
		name, src, field string
		kube             manifest.KubeVersion
		want             *rules.Fix
	}{
		{"job", job, "spec.template.spec.containers[1]", latest, &rules.Fix{Action: rules.FixNativeSidecar, Template: "spec.template", Container: 1}},
		{"jobset", jobset, "spec.replicatedJobs[0].template.spec.template.spec.containers[1]", latest,
			&rules.Fix{Action: rules.FixNativeSidecar, Template: "spec.replicatedJobs[0].template.spec.template", Container: 1}},
		{"not a container", job, "spec.template.spec.containers[1].image", latest, nil},
		{"no native sidecars before 1.29", job, "spec.template.spec.containers[1]", old, nil},
	}
	for _, tt := range tests {
		objs, errs := manifest.Parse("f.yaml", []byte(tt.src))
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		if got := nativeSidecarFix(objs[0], tt.field, tt.kube); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: got %+v, want %+v", tt.name, got, tt.want)
		}
	}
}
