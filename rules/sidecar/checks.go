package sidecar

import (
	"fmt"

	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules/internal/podutil"
)

// checkClassicInJob: a run-to-completion pod runs a long-running helper in containers[].
func checkClassicInJob(o *manifest.Object, content map[string]any, kube manifest.KubeVersion, r report) {
	for _, t := range manifest.PodTemplatesOf(o) {
		if !runsToCompletion(o, content, t) {
			continue
		}
		found, what := classicHelpers(content, t)
		for i, c := range found {
			fix := "make it a native sidecar: move it to initContainers with restartPolicy: Always"
			if kube.Less(sidecarBeta) {
				fix = fmt.Sprintf("native sidecars need Kubernetes 1.29 (target is %s): until then, have the app stop it when the work is done (e.g. the helper's quit endpoint)", kube)
			}
			r(c.Path, fmt.Sprintf("container %q runs %s (%s) in containers[] of a %s pod: it never exits, so the pod never completes; %s",
				c.Name, what[i], Repository(c.Image), o.Kind, fix))
		}
	}
}

// checkClassicSidecar: a long-running workload runs a known helper in containers[].
func checkClassicSidecar(o *manifest.Object, content map[string]any, kube manifest.KubeVersion, r report) {
	if kube.Less(sidecarBeta) {
		return // native sidecars are not an option for the target
	}
	for _, t := range manifest.PodTemplatesOf(o) {
		if !longRunning(o, content, t) {
			continue
		}
		found, what := classicHelpers(content, t)
		for i, c := range found {
			r(c.Path, fmt.Sprintf("container %q runs %s (%s) in containers[] beside the app; as a native sidecar (initContainers with restartPolicy: Always) it would start before the app and stop after it",
				c.Name, what[i], Repository(c.Image)))
		}
	}
}

// checkRestartPolicyOnContainer: restartPolicy on a regular container before
// the target serves per-container restart policies.
func checkRestartPolicyOnContainer(o *manifest.Object, content map[string]any, kube manifest.KubeVersion, r report) {
	if kube.AtLeast(restartRulesBeta) {
		return
	}
	for _, t := range manifest.PodTemplatesOf(o) {
		for _, c := range podutil.Containers(content, t.SpecPath()) {
			if c.Init {
				continue
			}
			if _, set := c.M["restartPolicy"]; !set {
				continue
			}
			var msg string
			if kube.Less(restartRulesAlpha) {
				msg = fmt.Sprintf("restartPolicy on regular container %q is rejected by Kubernetes %s: only init containers may set it (to Always, as native sidecars) before per-container restart rules arrived in 1.34 (KEP-5307); remove it, or move a sidecar to initContainers",
					c.Name, kube)
			} else {
				msg = fmt.Sprintf("restartPolicy on regular container %q needs the ContainerRestartRules feature gate, alpha and off by default in Kubernetes 1.34 (KEP-5307, beta and on by default from 1.35): without the gate the API rejects the pod; enable the gate or target 1.35+",
					c.Name)
			}
			r(c.Field("restartPolicy"), msg)
		}
	}
}

// probeFields are what the API forbids on an init container that runs to completion.
var probeFields = []string{"lifecycle", "livenessProbe", "readinessProbe", "startupProbe"}

// checkProbeOnInit: probes or lifecycle hooks on a plain init container.
func checkProbeOnInit(o *manifest.Object, content map[string]any, _ manifest.KubeVersion, r report) {
	for _, t := range manifest.PodTemplatesOf(o) {
		for _, c := range podutil.Containers(content, t.SpecPath()) {
			if !c.Init || c.RestartAlways() {
				continue
			}
			for _, f := range probeFields {
				if v, set := c.M[f]; set && v != nil {
					r(c.Field(f), fmt.Sprintf("init container %q sets %s, which the API rejects on an init container that runs to completion; remove it, or add restartPolicy: Always if the container is a sidecar that keeps running",
						c.Name, f))
				}
			}
		}
	}
}

// checkNeeds129: native sidecars for a target that does not run them.
func checkNeeds129(o *manifest.Object, content map[string]any, kube manifest.KubeVersion, r report) {
	if kube.AtLeast(sidecarBeta) {
		return
	}
	for _, t := range manifest.PodTemplatesOf(o) {
		for _, c := range podutil.Containers(content, t.SpecPath()) {
			if !c.Init || !c.RestartAlways() {
				continue
			}
			var msg string
			if kube.AtLeast(sidecarAlpha) {
				msg = fmt.Sprintf("native sidecar %q (init container with restartPolicy: Always) needs Kubernetes 1.29; in 1.28 it is alpha and runs only with the SidecarContainers feature gate enabled",
					c.Name)
			} else {
				msg = fmt.Sprintf("native sidecar %q (init container with restartPolicy: Always) needs Kubernetes 1.29; %s does not know restartPolicy on a container: clients that validate fields reject the pod, others have the field dropped, and the sidecar becomes a plain init container that never exits, so the app never starts",
					c.Name, kube)
			}
			r(c.Field("restartPolicy"), msg)
		}
	}
}

// checkNoStartupGate: a native sidecar that serves the app (it exposes a port)
// is judged ready by a readinessProbe only, which does not hold the app back.
func checkNoStartupGate(o *manifest.Object, content map[string]any, _ manifest.KubeVersion, r report) {
	for _, t := range manifest.PodTemplatesOf(o) {
		for _, c := range podutil.Containers(content, t.SpecPath()) {
			if !c.Init || !c.RestartAlways() {
				continue
			}
			if len(podutil.List(c.M, "ports")) == 0 || c.M["readinessProbe"] == nil || c.M["startupProbe"] != nil {
				continue
			}
			r(c.Path, fmt.Sprintf("native sidecar %q exposes a port and has a readinessProbe but no startupProbe: the kubelet starts the containers after it as soon as it is running, not ready, so the app may call it too early; add a startupProbe (e.g. the readinessProbe's check)",
				c.Name))
		}
	}
}
