package jobset

import "github.com/kilnhq/kiln/rules"

var ruleList = []*rules.Rule{
	{
		ID:       RWOClaimPolicy,
		Severity: rules.Warning,
		Summary:  "a ReadWriteOnce volumeClaimPolicies template is mounted by pods that may run on several nodes at once",
		Doc: `spec.volumeClaimPolicies makes the JobSet controller create one
PersistentVolumeClaim per template, shared by every pod of every replicated
job that mounts a volume of that name. A ReadWriteOnce volume attaches to one
node at a time: when a replicated job runs several pods, or two replicated
jobs that mount it run at the same time (no dependsOn with status Complete
between them), the pods on other nodes hang in ContainerCreating with a
Multi-Attach error. ReadWriteOncePod allows one pod at all (error).

When not to follow it: on a single-node cluster (kind, minikube) or when
affinity pins every pod to one node, ReadWriteOnce works.

Fix: a ReadWriteMany class for data that the pods share, or one pod.`,
		Fail: `apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: train}
spec:
  volumeClaimPolicies:
    - templates:
        - metadata: {name: checkpoints}
          spec:
            accessModes: [ReadWriteOnce]
            resources: {requests: {storage: 10Gi}}
  replicatedJobs:
    - name: workers
      template:
        spec:
          parallelism: 4
          completions: 4
          template:
            spec:
              restartPolicy: Never
              securityContext: {runAsNonRoot: true, seccompProfile: {type: RuntimeDefault}}
              containers:
                - name: train
                  image: ghcr.io/acme/train:1.0
                  volumeMounts: [{name: checkpoints, mountPath: /ckpt}]
                  securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}
`,
		Pass: `apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: train}
spec:
  volumeClaimPolicies:
    - templates:
        - metadata: {name: checkpoints}
          spec:
            storageClassName: efs-sc
            accessModes: [ReadWriteMany]
            resources: {requests: {storage: 10Gi}}
  replicatedJobs:
    - name: workers
      template:
        spec:
          parallelism: 4
          completions: 4
          template:
            spec:
              restartPolicy: Never
              securityContext: {runAsNonRoot: true, seccompProfile: {type: RuntimeDefault}}
              containers:
                - name: train
                  image: ghcr.io/acme/train:1.0
                  volumeMounts: [{name: checkpoints, mountPath: /ckpt}]
                  securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}
`,
	},
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

torchrun without --nnodes (and without PET_NNODES) runs one node: in a
replicated job of several pods, every pod then trains on its own, as a
separate single-node job, and the pods never exchange gradients (JobSet's
own resnet-cifar10 example does this on 4 pods). That is reported too.

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
              securityContext: {runAsNonRoot: true, seccompProfile: {type: RuntimeDefault}}
              containers:
                - name: trainer
                  image: ghcr.io/acme/train:2.3
                  command: [torchrun, --nnodes=8, --nproc_per_node=4, train.py]
                  resources: {limits: {nvidia.com/gpu: 4}}
                  securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}
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
              securityContext: {runAsNonRoot: true, seccompProfile: {type: RuntimeDefault}}
              containers:
                - name: trainer
                  image: ghcr.io/acme/train:2.3
                  command: [torchrun, --nnodes=8, --nproc_per_node=4, train.py]
                  resources: {limits: {nvidia.com/gpu: 4}}
                  securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}
`,
	},
}
