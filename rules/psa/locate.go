package psa

import (
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/pod-security-admission/policy"
)

// containerFields maps a check to the container field its detail names,
// relative to the container.
var containerFields = map[policy.CheckID]string{
	"allowPrivilegeEscalation":  "securityContext.allowPrivilegeEscalation",
	"appArmorProfile":           "securityContext.appArmorProfile",
	"capabilities_baseline":     "securityContext.capabilities.add",
	"capabilities_restricted":   "securityContext.capabilities",
	"privileged":                "securityContext.privileged",
	"procMount":                 "securityContext.procMount",
	"procMount_restricted":      "securityContext.procMount",
	"runAsNonRoot":              "securityContext.runAsNonRoot",
	"runAsUser":                 "securityContext.runAsUser",
	"seLinuxOptions":            "securityContext.seLinuxOptions",
	"seccompProfile_baseline":   "securityContext.seccompProfile",
	"seccompProfile_restricted": "securityContext.seccompProfile",
	"windowsHostProcess":        "securityContext.windowsOptions.hostProcess",
}

// podFields maps a check to the pod-level field its detail names, relative to the pod spec.
var podFields = map[policy.CheckID]string{
	"appArmorProfile":           "securityContext.appArmorProfile",
	"runAsNonRoot":              "securityContext.runAsNonRoot",
	"runAsUser":                 "securityContext.runAsUser",
	"seLinuxOptions":            "securityContext.seLinuxOptions",
	"seccompProfile_baseline":   "securityContext.seccompProfile",
	"seccompProfile_restricted": "securityContext.seccompProfile",
	"sysctls":                   "securityContext.sysctls",
	"windowsHostProcess":        "securityContext.windowsOptions.hostProcess",
}

// locate returns the path, relative to the pod template, of the field that
// makes check c fail, or of its nearest known container or the pod spec.
//
// It asks upstream which part is at fault by running the check on reduced
// copies of the pod: without containers (then without volumes, or with one
// annotation) for pod-level faults, else with one container at a time.
func locate(c check, meta *metav1.ObjectMeta, spec *corev1.PodSpec) string {
	fails := func(m *metav1.ObjectMeta, s *corev1.PodSpec) bool { return !c.fn(m, s).Allowed }

	bare := *spec
	bare.Containers, bare.InitContainers, bare.EphemeralContainers = nil, nil, nil
	if fails(meta, &bare) {
		return podLocation(c.id, meta, &bare, fails)
	}
	for i := range spec.Containers {
		one := bare
		one.Containers = spec.Containers[i : i+1]
		if fails(meta, &one) {
			return containerPath("spec.containers", i, c.id, &spec.Containers[i])
		}
	}
	for i := range spec.InitContainers {
		one := bare
		one.InitContainers = spec.InitContainers[i : i+1]
		if fails(meta, &one) {
			return containerPath("spec.initContainers", i, c.id, &spec.InitContainers[i])
		}
	}
	for i := range spec.EphemeralContainers {
		one := bare
		one.EphemeralContainers = spec.EphemeralContainers[i : i+1]
		if fails(meta, &one) {
			return containerPath("spec.ephemeralContainers", i, c.id, (*corev1.Container)(&spec.EphemeralContainers[i].EphemeralContainerCommon))
		}
	}
	return "spec"
}

// podLocation places a fault that shows without containers: a volume, an
// annotation, a host namespace or a pod securityContext field.
func podLocation(id policy.CheckID, meta *metav1.ObjectMeta, bare *corev1.PodSpec, fails func(*metav1.ObjectMeta, *corev1.PodSpec) bool) string {
	if len(bare.Volumes) > 0 {
		noVolumes := *bare
		noVolumes.Volumes = nil
		if !fails(meta, &noVolumes) {
			for i := range bare.Volumes {
				one := noVolumes
				one.Volumes = bare.Volumes[i : i+1]
				if fails(meta, &one) {
					return "spec.volumes[" + strconv.Itoa(i) + "]" + volumeSourceField(&bare.Volumes[i])
				}
			}
		}
	}
	if len(meta.Annotations) > 0 {
		noAnnotations := *meta
		noAnnotations.Annotations = nil
		if !fails(&noAnnotations, bare) {
			for _, k := range slices.Sorted(maps.Keys(meta.Annotations)) {
				one := noAnnotations
				one.Annotations = map[string]string{k: meta.Annotations[k]}
				if fails(&one, bare) {
					return "metadata.annotations[" + strconv.Quote(k) + "]"
				}
			}
			return "metadata.annotations"
		}
	}
	if id == "hostNamespaces" {
		switch {
		case bare.HostNetwork:
			return "spec.hostNetwork"
		case bare.HostPID:
			return "spec.hostPID"
		case bare.HostIPC:
			return "spec.hostIPC"
		}
	}
	if f, ok := podFields[id]; ok {
		return "spec." + f
	}
	return "spec"
}

// containerPath names the field of a container that check id objects to.
func containerPath(list string, i int, id policy.CheckID, c *corev1.Container) string {
	p := list + "[" + strconv.Itoa(i) + "]"
	switch id {
	case "hostPorts":
		for j, port := range c.Ports {
			if port.HostPort != 0 {
				return p + ".ports[" + strconv.Itoa(j) + "].hostPort"
			}
		}
		return p + ".ports"
	case "hostProbesAndHostLifecycle":
		if f := hostHandlerField(c); f != "" {
			return p + "." + f
		}
		return p
	}
	if f, ok := containerFields[id]; ok {
		return p + "." + f
	}
	return p
}

// hostHandlerField returns the first probe or lifecycle handler field that sets a host.
func hostHandlerField(c *corev1.Container) string {
	probes := []struct {
		name  string
		probe *corev1.Probe
	}{{"livenessProbe", c.LivenessProbe}, {"readinessProbe", c.ReadinessProbe}, {"startupProbe", c.StartupProbe}}
	for _, p := range probes {
		if p.probe == nil {
			continue
		}
		if f := handlerHostField(p.probe.HTTPGet, p.probe.TCPSocket); f != "" {
			return p.name + "." + f
		}
	}
	if c.Lifecycle != nil {
		for _, h := range []struct {
			name    string
			handler *corev1.LifecycleHandler
		}{{"postStart", c.Lifecycle.PostStart}, {"preStop", c.Lifecycle.PreStop}} {
			if h.handler == nil {
				continue
			}
			if f := handlerHostField(h.handler.HTTPGet, h.handler.TCPSocket); f != "" {
				return "lifecycle." + h.name + "." + f
			}
		}
	}
	return ""
}

func handlerHostField(get *corev1.HTTPGetAction, tcp *corev1.TCPSocketAction) string {
	switch {
	case get != nil && get.Host != "":
		return "httpGet.host"
	case tcp != nil && tcp.Host != "":
		return "tcpSocket.host"
	}
	return ""
}

// volumeSourceField returns ".<source>" for the source a volume sets (".hostPath", ".nfs"), or "".
func volumeSourceField(v *corev1.Volume) string {
	src := reflect.ValueOf(v.VolumeSource)
	t := src.Type()
	for i := 0; i < t.NumField(); i++ {
		if f := src.Field(i); f.Kind() == reflect.Pointer && !f.IsNil() {
			name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
			return "." + name
		}
	}
	return ""
}
