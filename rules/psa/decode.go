package psa

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/kilnhq/kiln/manifest"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	kjson "sigs.k8s.io/json"
)

// decodeTemplate decodes a pod template's metadata and spec as the API server
// does: field names match case-sensitively, unknown fields are dropped, and a
// value of the wrong type is an error. It then applies the server defaults
// that change Pod Security verdicts (see applyDefaults).
func decodeTemplate(content map[string]any, t manifest.PodTemplate, isPod bool) (*metav1.ObjectMeta, *corev1.PodSpec, error) {
	meta, err := convert[metav1.ObjectMeta](content, t.MetadataPath())
	if err != nil {
		return nil, nil, err
	}
	spec, err := convert[corev1.PodSpec](content, t.SpecPath())
	if err != nil {
		return nil, nil, err
	}
	applyDefaults(spec, isPod)
	return meta, spec, nil
}

// decodeError is a value in a pod template that the API server cannot decode.
type decodeError struct {
	// Path is the field path of the template part (metadata or spec) in the object.
	Path string
	Msg  string
}

func (e *decodeError) Error() string { return e.Path + ": " + e.Msg }

// convert decodes the mapping at path into a T (a zero T when it is absent).
//
// runtime.DefaultUnstructuredConverter matches JSON field names exactly and
// drops unknown fields, like the API server's decoder, and is several times
// faster than a JSON round trip. When it fails, the value is decoded again
// the API server's way (JSON, sigs.k8s.io/json case-sensitive) for its
// verdict and its more precise error.
func convert[T any](content map[string]any, path string) (*T, error) {
	out := new(T)
	v := manifest.ValueAt(content, path)
	if v == nil {
		return out, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, &decodeError{path, "expected a mapping, found " + describe(v)}
	}
	err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, out)
	if err == nil {
		return out, nil
	}
	data, jerr := json.Marshal(m)
	if jerr != nil {
		return nil, &decodeError{path, err.Error()}
	}
	out = new(T)
	if jerr = kjson.UnmarshalCaseSensitivePreserveInts(data, out); jerr != nil {
		return nil, &decodeError{path, strings.TrimPrefix(jerr.Error(), "json: ")}
	}
	return out, nil
}

func describe(v any) string {
	switch v.(type) {
	case []any:
		return "a list"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case int64, float64:
		return "a number"
	}
	return fmt.Sprintf("%T", v)
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
