package storage

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

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
	prov := known.lookupProvisioner(sc.provisioner)
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
	obj   *manifest.Object
	field string // the volume
	pods  int64  // pods of the template that run at once; -1: one per node (DaemonSet)
	what  string // "Deployment \"web\" (3 replicas)"
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

// checkRWOShared: a ReadWriteOnce(Pod) claim in the input mounted by more
// than one pod at once: by a workload with several pods, or by several
// workloads. Objects are identified by group, kind, namespace and name
// (manifest.Identity), so copies of one workload count once and each user
// is named once.
func checkRWOShared(p *rules.Pass, claims []*claim) {
	byKey := map[claimKey]*claim{}
	for _, c := range claims {
		if !c.template && !c.hasMode("ReadWriteMany") && !c.hasMode("ReadOnlyMany") &&
			(c.hasMode("ReadWriteOnce") || c.hasMode("ReadWriteOncePod")) {
			k := claimKey{manifest.UnitOf(c.obj), c.namespace, c.name}
			if byKey[k] == nil {
				byKey[k] = c
			}
		}
	}
	if len(byKey) == 0 {
		return
	}
	uses := map[claimKey][]claimUse{}
	seen := map[manifest.Identity]bool{}
	for _, o := range p.Objects {
		id := manifest.IdentityOf(o)
		if seen[id] {
			continue // a copy: object/duplicate reports it
		}
		seen[id] = true
		content, err := o.Content()
		if err != nil || content == nil {
			continue
		}
		for _, t := range manifest.PodTemplatesOf(o) {
			pods, what := podsOf(o, content, t)
			if pods == 0 {
				continue
			}
			for j, v := range podutil.List(podutil.Spec(content, t.SpecPath()), "volumes") {
				m, _ := v.(map[string]any)
				k := claimKey{id.Unit, o.Namespace, podutil.Str(podutil.Map(m, "persistentVolumeClaim"), "claimName")}
				if byKey[k] == nil {
					continue
				}
				// One use per template: a pod that mounts the claim twice is still one pod.
				if us := uses[k]; len(us) > 0 && us[len(us)-1].obj == o && us[len(us)-1].what == what {
					continue
				}
				uses[k] = append(uses[k], claimUse{obj: o, field: t.SpecPath() + ".volumes[" + strconv.Itoa(j) + "]", pods: pods, what: what})
			}
		}
	}
	keys := make([]claimKey, 0, len(uses))
	for k := range uses {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.unit != b.unit {
			return a.unit < b.unit
		}
		if a.namespace != b.namespace {
			return a.namespace < b.namespace
		}
		return a.name < b.name
	})
	for _, k := range keys {
		c, us := byKey[k], uses[k]
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
			p.Report(rules.Diagnostic{Rule: RWOShared, Severity: sev, Object: u.obj, Field: u.field, Message: fmt.Sprintf("claim %q is %s but %s: %s; use a ReadWriteMany class, one claim per pod (a StatefulSet volumeClaimTemplate), or a single pod",
				c.name, mode, why, effect)})
		}
	}
}
