package jobset

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/kilnhq/kiln/rules"
	"github.com/kilnhq/kiln/rules/internal/podutil"
)

// mounts reports whether a pod of the replicated job mounts the volume name
// (in a container or an init container).
func (r *rjob) mounts(name string) bool {
	for _, c := range r.containers {
		for _, m := range podutil.List(c.M, "volumeMounts") {
			mm, _ := m.(map[string]any)
			if podutil.Str(mm, "name") == name {
				return true
			}
		}
	}
	return false
}

// ordered reports whether a and b never run at once: one starts after the
// other completes (dependsOn with status Complete, directly).
func ordered(a, b *rjob) bool {
	return slices.Contains(a.after, b.name) || slices.Contains(b.after, a.name)
}

// checkClaimPolicies: a ReadWriteOnce(Pod) volumeClaimPolicies template
// mounted by pods that may run on several nodes at once: a replicated job
// of several pods, or replicated jobs that run together.
func checkClaimPolicies(js *jobSet, r report) {
	for _, c := range js.claims {
		rwo, rwop := slices.Contains(c.modes, "ReadWriteOnce"), slices.Contains(c.modes, "ReadWriteOncePod")
		if c.name == "" || (!rwo && !rwop) || slices.Contains(c.modes, "ReadWriteMany") || slices.Contains(c.modes, "ReadOnlyMany") {
			continue
		}
		var users []*rjob
		for _, rj := range js.rjobs {
			if rj.mounts(c.name) {
				users = append(users, rj)
			}
		}
		var why []string
		for i, a := range users {
			if a.pods() > 1 {
				why = append(why, fmt.Sprintf("replicated job %q runs %d pods at once", a.name, a.pods()))
			}
			for _, b := range users[i+1:] {
				if !ordered(a, b) {
					why = append(why, fmt.Sprintf("replicated jobs %q and %q run at the same time", a.name, b.name))
				}
			}
		}
		if len(why) == 0 {
			continue
		}
		mode, sev := "ReadWriteOnce", rules.Warning
		effect := "pods scheduled on other nodes stay in ContainerCreating with a Multi-Attach error (not if every pod lands on one node: a single-node cluster, or affinity that pins them together)"
		if rwop {
			mode, sev = "ReadWriteOncePod", rules.Error
			effect = "only one pod can mount it; the others stay Pending"
		}
		r(sev, c.path+".spec.accessModes["+strconv.Itoa(slices.Index(c.modes, mode))+"]", fmt.Sprintf(
			"volumeClaimPolicies template %q is %s, and the JobSet controller makes one claim of it that every pod mounting it shares, but %s: %s; use a ReadWriteMany class for data the pods share",
			c.name, mode, strings.Join(why, ", and "), effect))
	}
}
