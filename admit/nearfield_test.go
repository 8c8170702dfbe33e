package admit

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
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

// TestErrorBodyNoGoValues: a validation error whose bad value is a Go
// struct says its type and detail, not the struct.
func TestErrorBodyNoGoValues(t *testing.T) {
	yes := true
	e := field.Invalid(field.NewPath("spec", "containers").Index(0).Child("securityContext"), &corev1.SecurityContext{Privileged: &yes},
		"cannot set `allowPrivilegeEscalation` to false and `privileged` to true")
	if got, want := errorBody(e), "Invalid value: cannot set `allowPrivilegeEscalation` to false and `privileged` to true"; got != want {
		t.Errorf("errorBody = %q, want %q", got, want)
	}
	if got, want := errorBody(field.Invalid(field.NewPath("spec", "replicas"), int64(-1), "must be greater than or equal to 0")), "Invalid value: -1: must be greater than or equal to 0"; got != want {
		t.Errorf("errorBody = %q, want %q", got, want)
	}
}
