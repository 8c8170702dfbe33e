package storage

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules"
	"github.com/kilnhq/kiln/rules/internal/podutil"
)

// hasMode reports whether the claim asks for an access mode.
func (c *claim) hasMode(m string) bool {
	for _, x := range c.modes {
		if x == m {
			return true
		}
	}
	return false
}

// checkRWXUnsupported: a ReadWriteMany claim on a provisioner without RWX file access.
func checkRWXUnsupported(c *claim, classes map[string]*storageClass, def *storageClass, r func(field, msg string)) {
	if !c.hasMode("ReadWriteMany") {
		return
	}
	var sc *storageClass
	switch {
	case c.hasClass && c.class == "":
		return // bound to a pre-provisioned volume, not provisioned
	case c.hasClass:
		sc = resolve(classes, c.class)
	default:
		sc = def
	}
	if sc == nil {
		return
	}
	prov := known().lookupProvisioner(sc.provisioner)
	if prov == nil || prov.RWX || (prov.RWXBlock && c.volumeMode == "Block") {
		return
	}
	extra := ""
	if prov.RWXBlock {
		extra = " (ReadWriteMany only for raw block volumes, volumeMode: Block)"
	}
	r(c.modeField("ReadWriteMany"), fmt.Sprintf("%s asks for ReadWriteMany, but StorageClass %q (from %s) provisions with %s: %s, block storage that attaches to one node at a time%s: the claim stays Pending or its pods cannot mount it; use a class with ReadWriteMany file storage (EFS, Filestore, Azure Files, NFS, CephFS, Longhorn) or ReadWriteOnce",
		c.describe(), sc.name, sc.source, sc.provisioner, prov.What, extra))
}

// checkRWXNoClass: a ReadWriteMany claim left to the cluster's default class.
func checkRWXNoClass(c *claim, def *storageClass, r func(field, msg string)) {
	if !c.hasMode("ReadWriteMany") || c.hasClass || c.volumeName != "" {
		return
	}
	known := ""
	if def != nil {
		known = fmt.Sprintf(" (the default in %s is %q, provisioner %s)", def.source, def.name, def.provisioner)
	}
	r(c.modeField("ReadWriteMany"), fmt.Sprintf("%s asks for ReadWriteMany without storageClassName, so it gets the cluster's default class%s, which on most managed clusters is block storage without ReadWriteMany (gp2/gp3, standard-rwo, managed-csi); name a ReadWriteMany class",
		c.describe(), known))
}

// claimUse is one pod template volume that mounts a claim.
type claimUse struct {
	id   manifest.Identity
	key  claimKey
	at   *rules.Mark // the volume
	n    int         // the use's place among its object's uses
	pods int64       // pods of the template that run at once; -1: one per node (DaemonSet)
	what string      // "Deployment \"web\" (3 replicas)"
}

// podsOf returns how many pods a pod template runs at once and describes it.
func podsOf(o *manifest.Object, content map[string]any, t manifest.PodTemplate) (int64, string) {
	spec := podutil.Map(content, "spec")
	name := fmt.Sprintf("%s %q", o.Kind, o.Name)
	switch {
	case o.Kind == "Pod":
		return 1, name
	case o.Kind == "DaemonSet":
		return -1, name + " (one pod per node)"
	case o.Kind == "Job":
		n := podutil.IntOr(spec, "parallelism", 1)
		return n, fmt.Sprintf("%s (parallelism %d)", name, n)
	case o.Kind == "CronJob":
		n := podutil.IntOr(podutil.Map(spec, "jobTemplate", "spec"), "parallelism", 1)
		return n, fmt.Sprintf("%s (parallelism %d)", name, n)
	case o.Kind == "JobSet":
		rj, _ := podutil.At(content, strings.TrimSuffix(t.Path, ".template.spec.template")).(map[string]any)
		reps := podutil.IntOr(rj, "replicas", 1)
		par := podutil.IntOr(podutil.Map(rj, "template", "spec"), "parallelism", 1)
		return reps * par, fmt.Sprintf("%s, replicated job %q (%d × %d pods)", name, t.Name, reps, par)
	case o.Kind == "PodTemplate":
		return 0, name
	}
	n := podutil.IntOr(spec, "replicas", 1)
	return n, fmt.Sprintf("%s (%d replicas)", name, n)
}

// claimKey names a claim within its rendered unit and namespace: pods
// mount claims of their own namespace, and a unit (a chart, a
// kustomization, a directory) is what is applied together.
type claimKey struct{ unit, namespace, name string }

// sharing is what storage/rwo-shared keeps while objects are judged: the
// first ReadWriteOnce(Pod) claim of each key and every volume that mounts a
// claim.
type sharing struct {
	mu     sync.Mutex
	claims map[claimKey]*claim
	order  map[claimKey]int64
	uses   []claimUse
}

// addClaim records a ReadWriteOnce(Pod) claim, the first of its key in
// input order.
func (s *sharing) addClaim(c *claim) {
	if c.template || c.hasMode("ReadWriteMany") || c.hasMode("ReadOnlyMany") ||
		!(c.hasMode("ReadWriteOnce") || c.hasMode("ReadWriteOncePod")) {
		return
	}
	k := claimKey{manifest.UnitOf(c.obj), c.namespace, c.name}
	order := c.obj.Order
	kept := *c
	kept.obj = nil // the object is gone once judged
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.order == nil {
		s.order = map[claimKey]int64{}
	}
	if prev, ok := s.order[k]; ok && prev <= order {
		return
	}
	s.claims[k], s.order[k] = &kept, order
}

// addUses records the volumes of the object's pod templates that mount a
// claim (one use per template: a pod that mounts the claim twice is still
// one pod).
func (s *sharing) addUses(p *rules.Pass, o *manifest.Object, content map[string]any) {
	id := manifest.IdentityOf(o)
	var uses []claimUse
	for _, t := range manifest.PodTemplatesOf(o) {
		pods, what := podsOf(o, content, t)
		if pods == 0 {
			continue
		}
		seen := map[claimKey]bool{}
		for j, v := range podutil.List(podutil.Spec(content, t.SpecPath()), "volumes") {
			m, _ := v.(map[string]any)
			name := podutil.Str(podutil.Map(m, "persistentVolumeClaim"), "claimName")
			if name == "" {
				continue
			}
			k := claimKey{id.Unit, o.Namespace, name}
			if seen[k] {
				continue
			}
			seen[k] = true
			uses = append(uses, claimUse{id: id, key: k, at: p.Mark(o, t.SpecPath()+".volumes["+strconv.Itoa(j)+"]"), n: len(uses), pods: pods, what: what})
		}
	}
	if len(uses) == 0 {
		return
	}
	s.mu.Lock()
	s.uses = append(s.uses, uses...)
	s.mu.Unlock()
}

// report is storage/rwo-shared: a ReadWriteOnce(Pod) claim in the input
// mounted by more than one pod at once: by a workload with several pods, or
// by several workloads. Objects are identified by group, kind, namespace and
// name (manifest.Identity), so copies of one workload count once (the first
// copy that mounts claims) and each user is named once.
func (s *sharing) report(p *rules.Pass) {
	if len(s.claims) == 0 {
		return
	}
	slices.SortFunc(s.uses, func(a, b claimUse) int {
		return cmp.Or(cmp.Compare(a.at.Order, b.at.Order), cmp.Compare(a.n, b.n))
	})
	uses := map[claimKey][]claimUse{}
	first := map[manifest.Identity]int64{}
	for _, u := range s.uses {
		if o, ok := first[u.id]; ok && o != u.at.Order {
			continue // a copy: object/duplicate reports it
		}
		first[u.id] = u.at.Order
		if s.claims[u.key] != nil {
			uses[u.key] = append(uses[u.key], u)
		}
	}
	keys := slices.SortedFunc(maps.Keys(uses), func(a, b claimKey) int {
		return cmp.Or(cmp.Compare(a.unit, b.unit), cmp.Compare(a.namespace, b.namespace), cmp.Compare(a.name, b.name))
	})
	for _, k := range keys {
		c, us := s.claims[k], uses[k]
		mode, sev := "ReadWriteOnce", rules.Warning
		effect := "pods on other nodes stay in ContainerCreating with a Multi-Attach error"
		if c.hasMode("ReadWriteOncePod") {
			mode, sev = "ReadWriteOncePod", rules.Error
			effect = "only one pod can mount it; the others stay Pending"
		} else {
			effect += " (not if every pod lands on one node: a single-node cluster, or affinity that pins them together)"
		}
		for i, u := range us {
			var why string
			switch {
			case len(us) > 1:
				var others []string
				for j, o := range us {
					if j != i {
						others = append(others, o.what)
					}
				}
				why = fmt.Sprintf("%s mounts it, and so does %s", u.what, strings.Join(others, ", "))
			case u.pods > 1 || u.pods < 0:
				why = fmt.Sprintf("%s mounts it in every pod", u.what)
			default:
				continue
			}
			p.Report(rules.Diagnostic{Rule: RWOShared, Severity: sev, At: u.at, Message: fmt.Sprintf("claim %q is %s but %s: %s; use a ReadWriteMany class, one claim per pod (a StatefulSet volumeClaimTemplate), or a single pod",
				c.name, mode, why, effect)})
		}
	}
}
