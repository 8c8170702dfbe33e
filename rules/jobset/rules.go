package jobset

import "github.com/kilnhq/kiln/rules"

var ruleList = []*rules.Rule{
	{
		ID:       TorchrunNnodes,
		Severity: rules.Error,
		Summary:  "torchrun's --nnodes (or PET_NNODES) differs from the pods of its replicated job, or --nproc_per_node exceeds the GPU limit",
		Doc: `torchrun waits at rendezvous until --nnodes nodes (pods, here) have
joined. In a JobSet a replicated job runs replicas × parallelism pods at
once. When the two differ, the extra pods fail (their node rank is out of
range) or wait forever, and a job with too few pods never starts: the
classic case is replicas: 8, parallelism: 8 and --nnodes=8, 64 pods told
that there are 8 nodes. An elastic --nnodes=MIN:MAX is accepted when the
pod count lies within it. When several replicated jobs launch torchrun
(a leader and workers), their pods are counted together.

--nproc_per_node starts that many processes per pod, one per GPU; more
processes than the container's nvidia.com/gpu limit leaves ranks without a
GPU.

kiln reads --nnodes and --nproc_per_node (or --nproc-per-node) from command
and args (shell scripts in one element are split on spaces, $(VAR) is
expanded from literal env values) and PET_NNODES / PET_NPROC_PER_NODE from
env.

Fix: set --nnodes to replicas × parallelism (usually: one pod per node,
parallelism = completions = nodes, replicas 1), and --nproc_per_node to the
GPUs per pod.`,
		Fail: `apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: pretrain}
spec:
  replicatedJobs:
    - name: workers
      replicas: 8
      template:
        spec:
          parallelism: 8
          completions: 8
          template:
            spec:
              restartPolicy: Never
              containers:
                - name: trainer
                  image: ghcr.io/acme/train:2.3
                  command: [torchrun, --nnodes=8, --nproc_per_node=4, train.py]
                  resources: {limits: {nvidia.com/gpu: 4}}
`,
		Pass: `apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: pretrain}
spec:
  replicatedJobs:
    - name: workers
      replicas: 1
      template:
        spec:
          parallelism: 8
          completions: 8
          template:
            spec:
              restartPolicy: Never
              containers:
                - name: trainer
                  image: ghcr.io/acme/train:2.3
                  command: [torchrun, --nnodes=8, --nproc_per_node=4, train.py]
                  resources: {limits: {nvidia.com/gpu: 4}}
`,
	},
	{
		ID:       GPULimits,
		Severity: rules.Error,
		Summary:  "GPUs requested without a limit, or GPU requests different from limits",
		Doc: `GPUs (nvidia.com/gpu, amd.com/gpu, gpu.intel.com/*) are extended resources,
which cannot be overcommitted: the API requires a limit and accepts a
request only when it equals the limit. A JobSet whose pod template breaks
this is accepted, but every Job it creates fails to create pods.

Fix: set resources.limits for the GPU; leave requests out (they default to
the limit) or make them equal.`,
		Fail: `apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: pretrain}
spec:
  replicatedJobs:
    - name: workers
      template:
        spec:
          template:
            spec:
              containers:
                - name: trainer
                  image: ghcr.io/acme/train:2.3
                  resources: {requests: {nvidia.com/gpu: 4}}
`,
		Pass: `apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: pretrain}
spec:
  replicatedJobs:
    - name: workers
      template:
        spec:
          template:
            spec:
              containers:
                - name: trainer
                  image: ghcr.io/acme/train:2.3
                  resources: {limits: {nvidia.com/gpu: 4}}
`,
	},
	{
		ID:       NameLength,
		Severity: rules.Error,
		Summary:  "a generated Job name, pod hostname or coordinator label value is over 63 characters",
		Doc: `JobSet names what it creates: Jobs <jobset>-<replicatedJob>-<jobIndex>,
pods (Indexed, the default) with hostname
<jobset>-<replicatedJob>-<jobIndex>-<podIndex>, and, with spec.coordinator,
a jobset.sigs.k8s.io/coordinator label and annotation whose value is
<jobset>-<replicatedJob>-<jobIndex>-<podIndex>.<subdomain> (subdomain:
spec.network.subdomain, else the JobSet name). Hostnames, Job names and
label values are limited to 63 characters, and JobSet's webhook also
rejects a JobSet whose longest pod name, with the 6-character suffix a Job
adds, would exceed 63. kiln computes the longest of each from the largest
indexes.

Fix: shorten the JobSet or replicated job names (or set a short
spec.network.subdomain for the coordinator label).`,
		Fail: `apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: llama-3-70b-instruct-finetune-2024-11-30}
spec:
  replicatedJobs:
    - name: workers-with-a-long-name
      replicas: 4
      template:
        spec:
          parallelism: 16
          completions: 16
          template:
            spec:
              containers: [{name: trainer, image: ghcr.io/acme/train:2.3}]
`,
		Pass: `apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: llama-ft}
spec:
  replicatedJobs:
    - name: workers
      replicas: 4
      template:
        spec:
          parallelism: 16
          completions: 16
          template:
            spec:
              containers: [{name: trainer, image: ghcr.io/acme/train:2.3}]
`,
	},
	{
		ID:       DependsOn,
		Severity: rules.Error,
		Summary:  "dependsOn names an unknown or later replicated job, or is set on the first",
		Doc: `A replicated job may wait for an earlier one (dependsOn, JobSet v0.8+)
to be Ready or Complete. JobSet rejects a dependsOn that names a replicated
job not listed before it; on the first replicated job there is nothing to
depend on.

Fix: name an earlier replicated job (reorder spec.replicatedJobs if
needed) or remove dependsOn.`,
		Fail: `apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: pretrain}
spec:
  replicatedJobs:
    - name: trainer
      dependsOn: [{name: initializer, status: Complete}]
      template: {spec: {template: {spec: {containers: [{name: t, image: ghcr.io/acme/train:2.3}]}}}}
    - name: initializer
      template: {spec: {template: {spec: {containers: [{name: i, image: ghcr.io/acme/init:1.0}]}}}}
`,
		Pass: `apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: pretrain}
spec:
  replicatedJobs:
    - name: initializer
      template: {spec: {template: {spec: {containers: [{name: i, image: ghcr.io/acme/init:1.0}]}}}}
    - name: trainer
      dependsOn: [{name: initializer, status: Complete}]
      template: {spec: {template: {spec: {containers: [{name: t, image: ghcr.io/acme/train:2.3}]}}}}
`,
	},
	{
		ID:       SuccessTargets,
		Severity: rules.Error,
		Summary:  "successPolicy.targetReplicatedJobs names an unknown replicated job",
		Doc: `successPolicy decides when the JobSet succeeds from the replicated jobs it
targets; JobSet rejects target names that are not replicated jobs of the
JobSet (a typo would otherwise leave the JobSet running forever).

Fix: use the replicated job's name exactly.`,
		Fail: `apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: pretrain}
spec:
  successPolicy: {operator: All, targetReplicatedJobs: [worker]}
  replicatedJobs:
    - name: workers
      template: {spec: {template: {spec: {containers: [{name: t, image: ghcr.io/acme/train:2.3}]}}}}
`,
		Pass: `apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: pretrain}
spec:
  successPolicy: {operator: All, targetReplicatedJobs: [workers]}
  replicatedJobs:
    - name: workers
      template: {spec: {template: {spec: {containers: [{name: t, image: ghcr.io/acme/train:2.3}]}}}}
`,
	},
	{
		ID:       Indexed,
		Severity: rules.Error,
		Summary:  "a replicated job reached by hostname is not Indexed, or its parallelism differs from its completions",
		Doc: `Pods get stable hostnames (<jobset>-<replicatedJob>-<jobIndex>-<podIndex>)
only in Indexed Jobs, JobSet's default. A replicated job that is the
coordinator, or whose hostnames other containers use (MASTER_ADDR,
--rdzv_endpoint, ...), breaks with completionMode: NonIndexed: the name
never resolves (error).

In a distributed job every index must run at the same time: completions
greater than parallelism leaves some ranks waiting for others that cannot
start, and an Indexed Job needs completions (warning).

Fix: leave completionMode unset (or Indexed) and set parallelism and
completions to the same number.`,
		Fail: `apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: pretrain}
spec:
  coordinator: {replicatedJob: leader}
  replicatedJobs:
    - name: leader
      template:
        spec:
          completionMode: NonIndexed
          template: {spec: {containers: [{name: t, image: ghcr.io/acme/train:2.3}]}}
`,
		Pass: `apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: pretrain}
spec:
  coordinator: {replicatedJob: leader}
  replicatedJobs:
    - name: leader
      template:
        spec:
          completionMode: Indexed
          parallelism: 1
          completions: 1
          template: {spec: {containers: [{name: t, image: ghcr.io/acme/train:2.3}]}}
`,
	},
}
