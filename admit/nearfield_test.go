package admit

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

func TestNearField(t *testing.T) {
	tests := []struct {
		obj        any
		path, want string
	}{
		{&appsv1.Deployment{}, "spec.template.spec.containers[0].imagePullPolice", "imagePullPolicy"},
		{&appsv1.Deployment{}, "spec.replica", "replicas"},
		{&appsv1.Deployment{}, "metadata.lables", "labels"},
		{&appsv1.Deployment{}, "apiVersoin", "apiVersion"},
		{&corev1.Pod{}, "spec.containers[1].resources.limit", "limits"},
		{&corev1.Pod{}, "spec.containers[0].frobnicate", ""},
		{&corev1.Pod{}, "metadata.labels.app.x", ""}, // through a map: no struct
		{nil, "spec.x", ""},
	}
	for _, tt := range tests {
		if got := nearField(tt.obj, tt.path); got != tt.want {
			t.Errorf("nearField(%T, %q) = %q, want %q", tt.obj, tt.path, got, tt.want)
		}
	}
}
