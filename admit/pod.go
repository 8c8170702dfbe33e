package admit

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
)

// DefaultPod applies the server's Pod defaulting (k8s.io/kubernetes
// pkg/apis/core/v1 SetObjectDefaults_Pod) to a pod spec in place: what a Pod
// created from a pod template gets when its controller creates it, e.g.
// hostPort = containerPort in a hostNetwork pod, which templates do not get.
func DefaultPod(meta *metav1.ObjectMeta, spec *corev1.PodSpec) {
	pod := &corev1.Pod{Spec: *spec}
	if meta != nil {
		pod.ObjectMeta = *meta
	}
	legacyscheme.Scheme.Default(pod)
	*spec = pod.Spec
}
