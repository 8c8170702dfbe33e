package workload

import "github.com/kilnhq/kiln/rules"

var ruleList = []*rules.Rule{
	{
		ID:       ImageTag,
		Severity: rules.Warning,
		Summary:  "a container image without a tag, or tagged latest",
		Doc: `An image named without a tag is the image tagged latest, and latest
moves: each node runs the build the registry had when that node pulled it,
a rollback redeploys whatever latest is now, and nothing in Git says which
build runs. kube-linter (latest-tag) and Polaris (tagNotSpecified) flag it
by default.

An image pinned by digest (name@sha256:...) passes whatever its tag.

Fix: name a version tag (nginx:1.27.3) or a digest.
On by default; a team turns it off in .kiln.yaml: rules: {workload/image-tag: off}
(or "workload/*": off for the family).`,
		Fail: `# kiln lint --psa-level privileged
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: nginx:latest
        resources: {requests: {cpu: 100m, memory: 64Mi}, limits: {memory: 64Mi}}
`,
		Pass: `# kiln lint --psa-level privileged
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: nginx:1.27.3
        resources: {requests: {cpu: 100m, memory: 64Mi}, limits: {memory: 64Mi}}
`,
	},
	{
		ID:       Resources,
		Severity: rules.Warning,
		Summary:  "a container without CPU and memory requests or a memory limit",
		Doc: `The scheduler places a pod by its containers' requests: a container that
asks for nothing is placed as if it needed nothing, lands on full nodes, and
is the first evicted under pressure. Without a memory limit one container
can take a node's memory. kube-linter (unset-cpu-requirements,
unset-memory-requirements) and Polaris (cpuRequestsMissing,
memoryRequestsMissing, memoryLimitsMissing) flag it by default.

A limit without its request sets the request (the API server copies it), so
it counts. Containers of a namespace whose LimitRange (in the input, same
unit) gives containers a default or defaultRequest pass. Pods, Jobs and
CronJobs are judged too; init containers that run to completion are not
(they run first, within what the pod reserves for the others; native
sidecars are judged), nor ephemeral containers.

Fix: set resources.requests.cpu, resources.requests.memory and
resources.limits.memory, or give the namespace a LimitRange.
On by default; a team turns it off in .kiln.yaml: rules: {workload/resources: off}
(or "workload/*": off for the family).`,
		Fail: `# kiln lint --psa-level privileged
apiVersion: apps/v1
kind: Deployment
metadata: {name: worker}
spec:
  selector: {matchLabels: {app: worker}}
  template:
    metadata: {labels: {app: worker}}
    spec:
      containers:
      - name: worker
        image: registry.example/worker:2.1.0
`,
		Pass: `# kiln lint --psa-level privileged
apiVersion: apps/v1
kind: Deployment
metadata: {name: worker}
spec:
  selector: {matchLabels: {app: worker}}
  template:
    metadata: {labels: {app: worker}}
    spec:
      containers:
      - name: worker
        image: registry.example/worker:2.1.0
        resources: {requests: {cpu: 100m, memory: 128Mi}, limits: {memory: 128Mi}}
`,
	},
	{
		ID:       Readiness,
		Severity: rules.Warning,
		Summary:  "a container a Service sends traffic to has no readinessProbe",
		Doc: `A Service sends traffic to a pod's ports as soon as the pod is ready, and
without a readinessProbe a container is ready the moment it starts: before
the server in it listens, during a rolling update, and while it is
overloaded or stuck. Requests fail until it answers.

kiln judges precisely the containers that serve a Service: a container of a
Deployment, StatefulSet, DaemonSet, ReplicaSet or ReplicationController
(or a native sidecar of one) that declares a containerPort which a Service
of the same namespace and unit targets (its targetPort, by number or name,
or its port when it names no targetPort), the Service's selector matching
the pod template's labels. Services without a selector, of type
ExternalName, or with publishNotReadyAddresses: true (which send traffic
whether pods are ready or not) are not counted, nor ports that either side
names for metrics, profiling or probes (http-metrics, exporter, probes:
scraped or polled, not served). Workers, Jobs and containers no Service
reaches pass: a probe there gates nothing. Liveness
probes are not required: a wrong one restarts healthy containers.

Fix: add a readinessProbe (httpGet on a health path, or tcpSocket on the
port). On by default; a team turns it off in .kiln.yaml:
rules: {workload/readiness: off} (or "workload/*": off for the family).`,
		Fail: `# kiln lint --psa-level privileged
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  selector: {app: web}
  ports: [{port: 80, targetPort: http}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: nginx:1.27.3
        ports: [{name: http, containerPort: 80}]
        resources: {requests: {cpu: 100m, memory: 64Mi}, limits: {memory: 64Mi}}
`,
		Pass: `# kiln lint --psa-level privileged
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  selector: {app: web}
  ports: [{port: 80, targetPort: http}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: nginx:1.27.3
        ports: [{name: http, containerPort: 80}]
        readinessProbe: {httpGet: {path: /, port: http}}
        resources: {requests: {cpu: 100m, memory: 64Mi}, limits: {memory: 64Mi}}
`,
	},
	{
		ID:       PullPolicy,
		Severity: rules.Warning,
		Summary:  "imagePullPolicy IfNotPresent on an image whose tag moves (latest or none)",
		Doc: `With imagePullPolicy: IfNotPresent a node pulls an image once and runs
its copy from then on. For a tag that moves (latest, or no tag, which is
latest) each node keeps whichever build it pulled first: pods of one
Deployment run different code, and pushing a new latest changes nothing
until nodes are replaced. The API server defaults the policy to Always for
such images; IfNotPresent written by hand undoes that.

Never (images loaded on the nodes by hand, as kind and minikube do) and
tags that name a version pass.

Fix: pin a version tag or a digest (then IfNotPresent is right), or set
imagePullPolicy: Always. On by default; a team turns it off in .kiln.yaml:
rules: {workload/pull-policy: off} (or "workload/*": off for the family).`,
		Fail: `# kiln lint --psa-level privileged
apiVersion: v1
kind: Pod
metadata: {name: tool}
spec:
  containers:
  - name: helper
    image: registry.example/helper
    imagePullPolicy: IfNotPresent
    resources: {requests: {cpu: 10m, memory: 16Mi}, limits: {memory: 16Mi}}
`,
		Pass: `# kiln lint --psa-level privileged
apiVersion: v1
kind: Pod
metadata: {name: tool}
spec:
  containers:
  - name: helper
    image: registry.example/helper:3.2.1
    imagePullPolicy: IfNotPresent
    resources: {requests: {cpu: 10m, memory: 16Mi}, limits: {memory: 16Mi}}
`,
	},
}
