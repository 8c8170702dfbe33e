package sidecar

import "github.com/kilnhq/kiln/rules"

var ruleList = []*rules.Rule{
	{
		ID:       ClassicInJob,
		Severity: rules.Error,
		Summary:  "a Job, CronJob or JobSet pod runs a long-running helper (proxy, log shipper, agent) in containers[]",
		Doc: `A pod that should run to completion (a Job, CronJob or JobSet pod, or a Pod
with restartPolicy Never or OnFailure) finishes only when all of its regular
containers have exited. A proxy, log shipper or agent in containers[] never
exits, so the Job never completes: it holds its nodes (and GPUs) until
activeDeadlineSeconds, if any, kills it.

Helpers are recognised by image (see helpers.yaml in the sidecar package:
Envoy, Istio, Linkerd, Cloud SQL Proxy, Fluent Bit, Fluentd, Vector, the
OpenTelemetry Collector, Vault Agent, the Datadog Agent, ...), never by
container name. A pod made only of helper images is taken to be doing the
helper's job (e.g. a one-shot vault command) and is not reported.

Fix: make the helper a native sidecar (Kubernetes 1.29+): move it to
initContainers and set restartPolicy: Always. The kubelet then starts it
before the app and stops it once the app's containers have exited.`,
		Fail: `apiVersion: batch/v1
kind: Job
metadata: {name: export}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
        - {name: export, image: ghcr.io/acme/export:1.0}
        - {name: istio-proxy, image: docker.io/istio/proxyv2:1.22.0}
`,
		Pass: `apiVersion: batch/v1
kind: Job
metadata: {name: export}
spec:
  template:
    spec:
      restartPolicy: Never
      initContainers:
        - {name: istio-proxy, image: docker.io/istio/proxyv2:1.22.0, restartPolicy: Always}
      containers:
        - {name: export, image: ghcr.io/acme/export:1.0}
`,
	},
	{
		ID:       RestartPolicyOnContainer,
		Severity: rules.Error,
		Summary:  "restartPolicy on a regular container, which the target Kubernetes version rejects",
		Doc: `Until Kubernetes 1.34 only init containers may set restartPolicy (to Always,
which makes them native sidecars); the API rejects a pod whose regular
containers set it. Per-container restart policies and restartPolicyRules
for regular containers came with KEP-5307 (ContainerRestartRules): alpha in
1.34 behind a feature gate that is off by default, beta and on by default
from 1.35. The rule reports for targets below 1.35.

Fix: remove the field; if the container is a helper that should keep
running, make it a native sidecar in initContainers; or target 1.35+ (or
1.34 with the ContainerRestartRules gate enabled).`,
		Fail: `# kiln lint --kube-version 1.31
apiVersion: v1
kind: Pod
metadata: {name: worker}
spec:
  restartPolicy: Never
  containers:
    - {name: worker, image: ghcr.io/acme/worker:1.0, restartPolicy: OnFailure}
`,
		Pass: `# kiln lint --kube-version 1.31
apiVersion: v1
kind: Pod
metadata: {name: worker}
spec:
  restartPolicy: OnFailure
  containers:
    - {name: worker, image: ghcr.io/acme/worker:1.0}
`,
	},
	{
		ID:       ProbeOnInit,
		Severity: rules.Error,
		Summary:  "probes or lifecycle hooks on an init container that runs to completion (rejected by the API)",
		Doc: `An init container without restartPolicy: Always runs to completion before
the next one starts; the API rejects livenessProbe, readinessProbe,
startupProbe and lifecycle on it. They are only allowed on native sidecars
(init containers with restartPolicy: Always) and regular containers.

Fix: remove the probe or hook, or, if the container is meant to keep
running beside the app, add restartPolicy: Always to make it a sidecar.`,
		Fail: `apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  initContainers:
    - name: migrate
      image: ghcr.io/acme/migrate:1.0
      readinessProbe: {exec: {command: [test, -f, /tmp/done]}}
  containers:
    - {name: web, image: ghcr.io/acme/web:1.0}
`,
		Pass: `apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  initContainers:
    - {name: migrate, image: ghcr.io/acme/migrate:1.0}
  containers:
    - {name: web, image: ghcr.io/acme/web:1.0}
`,
	},
	{
		ID:       Needs129,
		Severity: rules.Error,
		Summary:  "native sidecars (init containers with restartPolicy: Always) for a Kubernetes version below 1.29",
		Doc: `Native sidecars (KEP-753, SidecarContainers) are beta and on by default from
Kubernetes 1.29 (GA in 1.33). In 1.28 they are alpha and work only where
the SidecarContainers feature gate is enabled. Before 1.28 the API server
does not know restartPolicy on a container: with strict field validation
(kubectl's default) the pod is rejected; otherwise the field is dropped, the
sidecar becomes a plain init container that never exits, and the app never
starts.

Fix: target 1.29 or newer (--kube-version), or, for older clusters, run the
helper in containers[] and stop it from the app when the work is done.`,
		Fail: `# kiln lint --kube-version 1.27
apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  initContainers:
    - {name: fluent-bit, image: fluent/fluent-bit:3.1, restartPolicy: Always}
  containers:
    - {name: web, image: ghcr.io/acme/web:1.0}
`,
		Pass: `# kiln lint --kube-version 1.29
apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  initContainers:
    - {name: fluent-bit, image: fluent/fluent-bit:3.1, restartPolicy: Always}
  containers:
    - {name: web, image: ghcr.io/acme/web:1.0}
`,
	},
	{
		ID:       NoStartupGate,
		Severity: rules.Warning,
		Summary:  "a native sidecar that serves a port has a readinessProbe but no startupProbe, so the app does not wait for it",
		Doc: `The kubelet starts the containers after a native sidecar as soon as the
sidecar is running, or, if it has a startupProbe, once that probe passes.
A readinessProbe does not hold anything back: it only takes the pod out of
Service endpoints. A sidecar that exposes a port is usually one the app
calls (a proxy, an auth or database proxy); without a startupProbe the app
starts while the sidecar is still warming up and its first calls fail.

Fix: add a startupProbe to the sidecar, usually the same check as its
readinessProbe.`,
		Fail: `apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  initContainers:
    - name: cloud-sql-proxy
      image: gcr.io/cloud-sql-connectors/cloud-sql-proxy:2.11.0
      restartPolicy: Always
      ports: [{containerPort: 5432}]
      readinessProbe: {tcpSocket: {port: 5432}}
  containers:
    - {name: web, image: ghcr.io/acme/web:1.0}
`,
		Pass: `apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  initContainers:
    - name: cloud-sql-proxy
      image: gcr.io/cloud-sql-connectors/cloud-sql-proxy:2.11.0
      restartPolicy: Always
      ports: [{containerPort: 5432}]
      readinessProbe: {tcpSocket: {port: 5432}}
      startupProbe: {tcpSocket: {port: 5432}}
  containers:
    - {name: web, image: ghcr.io/acme/web:1.0}
`,
	},
	{
		ID:       ClassicSidecar,
		Severity: rules.Info,
		Summary:  "a long-running workload runs a known helper in containers[]; it could be a native sidecar",
		Doc: `A Deployment (or StatefulSet, DaemonSet, ReplicaSet, or Pod that always
restarts) runs a known helper image (a proxy, log shipper or agent) in
containers[] beside the app. That works, but the helper starts in no
particular order with the app and may stop before it: a proxy that exits
first drops the app's last requests, a log shipper misses its last lines.
As a native sidecar (an init container with restartPolicy: Always,
Kubernetes 1.29+) it starts before the app and stops after it.

Not reported when the target is below 1.29.`,
		Fail: `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
        - {name: web, image: ghcr.io/acme/web:1.0}
        - {name: envoy, image: envoyproxy/envoy:v1.31.0}
`,
		Pass: `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      initContainers:
        - {name: envoy, image: envoyproxy/envoy:v1.31.0, restartPolicy: Always}
      containers:
        - {name: web, image: ghcr.io/acme/web:1.0}
`,
	},
}
