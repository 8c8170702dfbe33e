package sidecar

import "github.com/kilnhq/kiln/rules"

var ruleList = []*rules.Rule{{
	ID:       InjectedInJob,
	Severity: rules.Error,
	Summary:  "a Job, CronJob or JobSet pod gets a mesh's classic proxy injected (Linkerd, Istio): it never completes",
	Doc: `Linkerd and Istio inject their proxy into pods at admission, so it is not in
the manifest. Injected as a classic container, the proxy never exits: a Job's
pod then never completes, the Job never finishes and holds its nodes until
activeDeadlineSeconds (if any) kills it.

kiln knows the meshes' switches:
  - Linkerd: annotation linkerd.io/inject: enabled (or ingress) on the pod
    template or on its Namespace (disabled on the pod wins). Native sidecar
    mode (Linkerd 2.15+, Kubernetes 1.29+) is off by default; it is
    config.beta.linkerd.io/proxy-enable-native-sidecar: "true" (formerly
    config.alpha…) on the pod template or Namespace. Error.
  - Istio: label istio-injection=enabled or istio.io/rev=<revision> on the
    Namespace, or label (older: annotation) sidecar.istio.io/inject: "true"
    on the pod template ("false" wins). From Istio 1.27 the proxy is a native
    sidecar by default where the cluster supports it, so this is a warning
    unless the target is below 1.29 (error) or the pod sets
    sidecar.istio.io/nativeSidecar: "false" (error). The annotation
    sidecar.istio.io/nativeSidecar: "true" makes it native whatever the
    mesh's default.

Not reported when a container's command already stops the proxy at the end
(linkerd-await --shutdown, a POST to Linkerd's localhost:4191/shutdown or
Istio's localhost:15020/quitquitquit).

When not to follow it: a mesh installed with native sidecars on globally
(Linkerd proxy.nativeSidecar=true, Istio ENABLE_NATIVE_SIDECARS=true) already
does this; suppress the rule for those namespaces in .kiln.yaml.

Fix: ask for a native sidecar on the pod template (the annotations above),
or stop the proxy at the end of the job's command.`,
	Fail: `apiVersion: batch/v1
kind: Job
metadata: {name: migrate, namespace: shop}
spec:
  template:
    metadata:
      annotations: {linkerd.io/inject: enabled}
    spec:
      restartPolicy: Never
      securityContext: {runAsNonRoot: true, seccompProfile: {type: RuntimeDefault}}
      containers: [{name: migrate, image: ghcr.io/acme/migrate:1.0, securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}}]
`,
	Pass: `apiVersion: batch/v1
kind: Job
metadata: {name: migrate, namespace: shop}
spec:
  template:
    metadata:
      annotations:
        linkerd.io/inject: enabled
        config.beta.linkerd.io/proxy-enable-native-sidecar: "true"
    spec:
      restartPolicy: Never
      securityContext: {runAsNonRoot: true, seccompProfile: {type: RuntimeDefault}}
      containers: [{name: migrate, image: ghcr.io/acme/migrate:1.0, securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}}]
`,
}}
