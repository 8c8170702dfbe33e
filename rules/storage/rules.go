package storage

import "github.com/kilnhq/kiln/rules"

var ruleList = []*rules.Rule{
	{
		ID:       RWXUnsupported,
		Severity: rules.Error,
		Summary:  "a ReadWriteMany claim on a StorageClass whose provisioner has no ReadWriteMany file storage",
		Doc: `Block storage (Amazon EBS, GCE Persistent Disk, Azure Disk, Cinder, Ceph
RBD, node-local volumes) attaches to one node at a time. A claim that asks
for ReadWriteMany on such a class is never provisioned (or, for raw block
volumes on drivers that allow it, only with volumeMode: Block), and the pods
that mount it never start. File storage (EFS, Filestore, Azure Files, NFS,
CephFS, Longhorn) serves ReadWriteMany.

kiln finds the claim's class in the input, else in the file given with
--storage-classes (StorageClass objects of the target cluster), else in a
table of well-known class names (gp2, gp3, standard, standard-rwo,
premium-rwo, managed-csi, managed-premium, default, local-path, efs-sc,
azurefile, filestore, nfs-client, longhorn, cephfs, ...). The provisioner
table is provisioners.yaml in the storage package, with its sources.
Claims without storageClassName are judged against the default class when
the input or the class file marks one.

Fix: use a class with ReadWriteMany file storage, or ReadWriteOnce with a
single pod.`,
		Fail: `apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: dataset}
spec:
  storageClassName: gp2
  accessModes: [ReadWriteMany]
  resources: {requests: {storage: 100Gi}}
`,
		Pass: `apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: dataset}
spec:
  storageClassName: efs-sc
  accessModes: [ReadWriteMany]
  resources: {requests: {storage: 100Gi}}
`,
	},
	{
		ID:       RWOShared,
		Severity: rules.Warning,
		Summary:  "a ReadWriteOnce or ReadWriteOncePod claim mounted by several pods at once",
		Doc: `A ReadWriteOnce volume attaches to one node: pods of a multi-replica
workload (or of several workloads) that share the claim work only while
they all land on that node, and the others hang in ContainerCreating with a
Multi-Attach error. ReadWriteOncePod allows a single pod, full stop (error).
StatefulSet volumeClaimTemplates are one claim per pod and do not count;
claims that are not in the input are not judged.

Fix: a ReadWriteMany class for data that pods share, a volumeClaimTemplate
for per-pod data, or a single pod.`,
		Fail: `apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: cache}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 10Gi}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      securityContext: {runAsNonRoot: true, seccompProfile: {type: RuntimeDefault}}
      containers:
        - {name: web, image: ghcr.io/acme/web:1.0, volumeMounts: [{name: cache, mountPath: /cache}], securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}}
      volumes: [{name: cache, persistentVolumeClaim: {claimName: cache}}]
`,
		Pass: `apiVersion: apps/v1
kind: StatefulSet
metadata: {name: web}
spec:
  replicas: 3
  serviceName: web
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      securityContext: {runAsNonRoot: true, seccompProfile: {type: RuntimeDefault}}
      containers:
        - {name: web, image: ghcr.io/acme/web:1.0, volumeMounts: [{name: cache, mountPath: /cache}], securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}}
  volumeClaimTemplates:
    - metadata: {name: cache}
      spec:
        accessModes: [ReadWriteOnce]
        resources: {requests: {storage: 10Gi}}
`,
	},
	{
		ID:       RWXNoClass,
		Severity: rules.Warning,
		Summary:  "a ReadWriteMany claim without storageClassName, left to the cluster's default class",
		Doc: `A claim without storageClassName gets the cluster's default class, and the
default class of most managed clusters is block storage that cannot serve
ReadWriteMany (gp2/gp3 on EKS, standard-rwo on GKE, managed-csi on AKS).
The claim then works on one cluster and stays Pending on the next.
storageClassName: "" (bind to a pre-provisioned volume) and claims with
volumeName are not reported.

Fix: name a ReadWriteMany class in storageClassName.`,
		Fail: `apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: dataset}
spec:
  accessModes: [ReadWriteMany]
  resources: {requests: {storage: 100Gi}}
`,
		Pass: `apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: dataset}
spec:
  storageClassName: efs-sc
  accessModes: [ReadWriteMany]
  resources: {requests: {storage: 100Gi}}
`,
	},
}
