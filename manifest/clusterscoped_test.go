package manifest

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestBuiltinClusterScoped(t *testing.T) {
	tests := []struct {
		group, kind string
		want        bool
	}{
		{"", "Namespace", true},
		{"rbac.authorization.k8s.io", "ClusterRole", true},
		{"resource.k8s.io", "ResourceSlice", true},
		{"apiextensions.k8s.io", "CustomResourceDefinition", true},
		{"", "ConfigMap", false},
		{"apps", "Deployment", false},
		{"rbac.authorization.k8s.io", "Role", false},
		{"jobset.x-k8s.io", "JobSet", false},
		{"example.com", "ClusterWidget", false}, // unknown: not built in
	}
	for _, tt := range tests {
		if got := BuiltinClusterScoped(schema.GroupKind{Group: tt.group, Kind: tt.kind}); got != tt.want {
			t.Errorf("BuiltinClusterScoped(%s/%s) = %v, want %v", tt.group, tt.kind, got, tt.want)
		}
	}
}
