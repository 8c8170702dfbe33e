package compiler

import (
	"fmt"
	"sort"
	"strconv"

	"github.com/kilnhq/kiln/internal/yamlnode"
	"github.com/kilnhq/kiln/manifest"
)

// SyncWaveAnnotation orders an Argo CD sync: Argo CD applies the lowest wave,
// waits until its resources are healthy, then applies the next (a resource
// without it is in wave 0). Within one wave it applies kind after kind in a
// fixed order (Namespace, ConfigMap, PersistentVolumeClaim, Service,
// Deployment, then custom resources such as JobSet) without waiting for
// health, and it creates a Namespace before anything in it whatever the
// waves (gitops-engine pkg/sync/sync_tasks.go).
const SyncWaveAnnotation = "argocd.argoproj.io/sync-wave"

// syncWaves is the wave of each kind kiln compiles to (README: Argo CD).
// PersistentVolumeClaims stay in the wave of the pods that mount them: a
// claim of a WaitForFirstConsumer StorageClass (the default class of EKS,
// GKE and kind) binds only once a pod uses it, and Argo CD reports a Pending
// claim Progressing, so a claim in an earlier wave than its pods would hold
// the sync forever (argoproj/argo-cd#12840).
// NetworkPolicies come before the pods they select, so that no pod runs
// unprotected; HPAs, PDBs and jobs go with the workloads; routes come once
// the workloads are healthy, so that outside traffic finds ready pods.
var syncWaves = map[string]int{
	"Namespace":               -2,
	"ConfigMap":               -1,
	"Service":                 -1,
	"NetworkPolicy":           -1,
	"PersistentVolumeClaim":   0,
	"Deployment":              0,
	"HorizontalPodAutoscaler": 0,
	"PodDisruptionBudget":     0,
	"Job":                     0,
	"CronJob":                 0,
	"JobSet":                  0,
	"HTTPRoute":               1,
	"Ingress":                 1,
}

// SyncWave returns the Argo CD sync wave kiln gives a compiled kind.
func SyncWave(kind string) (int, bool) {
	w, ok := syncWaves[kind]
	return w, ok
}

// AddSyncWaves annotates every compiled object of x with its sync wave
// (SyncWave), in x.Compiled and in x.All, unless it already has one (the
// spec's metadata.annotations then set it for every object). Objects that
// are not compiled are left as they are.
func (x *Expansion) AddSyncWaves() error {
	replaced := map[*manifest.Object]*manifest.Object{}
	for i, o := range x.Compiled {
		n, err := withSyncWave(o)
		if err != nil {
			return err
		}
		replaced[o] = n
		x.Compiled[i] = n
	}
	for i, o := range x.All {
		if n, ok := replaced[o]; ok {
			x.All[i] = n
		}
	}
	return nil
}

// withSyncWave returns o annotated with its kind's wave (o itself when it
// has a wave already).
func withSyncWave(o *manifest.Object) (*manifest.Object, error) {
	if _, has := o.Annotations[SyncWaveAnnotation]; has {
		return o, nil
	}
	wave, ok := SyncWave(o.Kind)
	if !ok {
		return nil, fmt.Errorf("%s: kiln has no Argo CD sync wave for kind %s", o.Pos(), o.Kind)
	}
	root := o.Node()
	md := yamlnode.Value(root, "metadata")
	if md == nil {
		return nil, fmt.Errorf("%s: compiled %s has no metadata", o.Pos(), o.Kind)
	}
	p := pos{md.Line, md.Column}
	ann := yamlnode.Value(md, "annotations")
	if ann == nil {
		ann = mapping(p)
		add(md, field{"annotations", ann})
	}
	// Keys stay sorted, as stringMap writes them.
	i := sort.Search(len(ann.Content)/2, func(i int) bool { return ann.Content[2*i].Value >= SyncWaveAnnotation })
	entry := appendField(nil, field{SyncWaveAnnotation, str(p, strconv.Itoa(wave))})
	ann.Content = append(ann.Content[:2*i], append(entry, ann.Content[2*i:]...)...)
	return manifest.NewObject(o.File, o.Doc, o.Item, root)
}
