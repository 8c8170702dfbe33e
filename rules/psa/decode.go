package psa

import (
	"fmt"
	"strconv"

	"github.com/kilnhq/kiln/manifest"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

// decodeTemplate decodes a pod template's metadata and spec as the API server
// does: field names match case-sensitively, unknown fields are dropped, and a
// value of the wrong type is an error. It then applies the server defaults
// that change Pod Security verdicts (see applyDefaults).
func decodeTemplate(content map[string]any, t manifest.PodTemplate, isPod bool) (*metav1.ObjectMeta, *corev1.PodSpec, error) {
	meta := &metav1.ObjectMeta{}
	spec := &corev1.PodSpec{}
	if m, ok := valueAt(content, t.MetadataPath()).(map[string]any); ok {
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, meta); err != nil {
			return nil, nil, fmt.Errorf("%s: %v", t.MetadataPath(), err)
		}
	} else if v := valueAt(content, t.MetadataPath()); v != nil {
		return nil, nil, fmt.Errorf("%s: expected a mapping, found %T", t.MetadataPath(), v)
	}
	if m, ok := valueAt(content, t.SpecPath()).(map[string]any); ok {
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, spec); err != nil {
			return nil, nil, fmt.Errorf("%s: %v", t.SpecPath(), err)
		}
	} else if v := valueAt(content, t.SpecPath()); v != nil {
		return nil, nil, fmt.Errorf("%s: expected a mapping, found %T", t.SpecPath(), v)
	}
	applyDefaults(spec, isPod)
	return meta, spec, nil
}

// applyDefaults applies the two API server defaults (k8s.io/kubernetes
// pkg/apis/core/v1/defaults.go) that change what Pod Security sees:
// SetDefaults_Volume turns a volume with no source into an emptyDir, and
// SetDefaults_Pod (for Pods only, not pod templates) gives every port of a
// container or init container in a hostNetwork pod hostPort = containerPort
// when hostPort is unset.
func applyDefaults(spec *corev1.PodSpec, isPod bool) {
	for i := range spec.Volumes {
		if ptr.AllPtrFieldsNil(&spec.Volumes[i].VolumeSource) {
			spec.Volumes[i].VolumeSource = corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}
		}
	}
	if isPod && spec.HostNetwork {
		for _, cs := range [][]corev1.Container{spec.Containers, spec.InitContainers} {
			for i := range cs {
				for j := range cs[i].Ports {
					if cs[i].Ports[j].HostPort == 0 {
						cs[i].Ports[j].HostPort = cs[i].Ports[j].ContainerPort
					}
				}
			}
		}
	}
}

// valueAt returns the value at a field path in decoded content, or nil.
func valueAt(v any, path string) any {
	for _, seg := range manifest.SplitPath(path) {
		switch x := v.(type) {
		case map[string]any:
			v = x[seg]
		case []any:
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	return v
}
