package jobset

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/kilnhq/kiln/rules"
	"github.com/kilnhq/kiln/rules/internal/podutil"
)

// isGPU reports whether an extended resource name is a GPU.
func isGPU(name string) bool {
	return strings.HasSuffix(name, "/gpu") || strings.HasPrefix(name, "gpu.intel.com/")
}

// checkGPULimits: GPUs requested without limits, or requests ≠ limits.
func checkGPULimits(js *jobSet, r report) {
	for _, rj := range js.rjobs {
		for _, c := range rj.containers {
			res := podutil.Map(c.M, "resources")
			req, lim := podutil.Map(res, "requests"), podutil.Map(res, "limits")
			names := make([]string, 0, len(req))
			for k := range req {
				if isGPU(k) {
					names = append(names, k)
				}
			}
			sort.Strings(names)
			for _, k := range names {
				key := `["` + k + `"]`
				l, hasLimit := lim[k]
				switch {
				case !hasLimit:
					r(0, c.Field("resources.requests"+key), fmt.Sprintf("container %q requests %v %s without a limit: GPUs cannot be overcommitted, so the API rejects a request without an equal limit; set resources.limits[%q] (the request may then be left out)",
						c.Name, req[k], k, k))
				case fmt.Sprint(l) != fmt.Sprint(req[k]):
					r(0, c.Field("resources.limits"+key), fmt.Sprintf("container %q requests %v %s but its limit is %v: the API requires GPU requests to equal limits; set both to the same count",
						c.Name, req[k], k, l))
				}
			}
		}
	}
}

// maxLabel is the longest DNS label (hostname) or label value Kubernetes accepts.
const maxLabel = 63

// podSuffix is the "-xxxxx" a Job adds to its pod names; JobSet's webhook
// rejects JobSets whose longest pod name with it exceeds 63 characters.
const podSuffix = len("-abcde")

// checkNameLength: generated job names, pod hostnames and the coordinator label value.
func checkNameLength(js *jobSet, r report) {
	for _, rj := range js.rjobs {
		job := fmt.Sprintf("%s-%s-%d", js.name, rj.name, rj.replicas-1)
		if len(job) > maxLabel {
			r(0, rj.field("name"), fmt.Sprintf("the longest Job name %q is %d characters, over the 63 allowed: JobSet rejects it; shorten the JobSet or replicated job name", job, len(job)))
			continue
		}
		if !rj.indexed() {
			continue
		}
		pods := rj.parallelism
		if rj.hasCompl {
			pods = rj.completions
		}
		host := fmt.Sprintf("%s-%d", job, pods-1)
		switch {
		case len(host) > maxLabel:
			r(0, rj.field("name"), fmt.Sprintf("the longest pod hostname %q (<jobset>-<replicatedJob>-<jobIndex>-<podIndex>) is %d characters, over the 63 a hostname may have: pods cannot be created; shorten the JobSet or replicated job name", host, len(host)))
		case len(host)+podSuffix > maxLabel:
			r(0, rj.field("name"), fmt.Sprintf("the longest pod name %q plus the 6-character suffix Jobs add is %d characters, over 63: JobSet's webhook rejects the JobSet; shorten the JobSet or replicated job name", host, len(host)+podSuffix))
		}
	}
	if js.coordinator != nil {
		value := fmt.Sprintf("%s-%s-%d-%d.%s", js.name, podutil.Str(js.coordinator, "replicatedJob"),
			podutil.IntOr(js.coordinator, "jobIndex", 0), podutil.IntOr(js.coordinator, "podIndex", 0), js.subdomain)
		if len(value) > maxLabel {
			r(0, "spec.coordinator", fmt.Sprintf("the coordinator endpoint %q is %d characters; JobSet puts it in the jobset.sigs.k8s.io/coordinator label of every Job and pod, and label values may have at most 63: they cannot be created; shorten the names or set a shorter spec.network.subdomain", value, len(value)))
		}
	}
}

// checkDependsOn: dependsOn names an unknown or later replicated job, or is set on the first.
func checkDependsOn(js *jobSet, r report) {
	for _, rj := range js.rjobs {
		deps := podutil.List(rj.spec, "dependsOn")
		if len(deps) == 0 {
			continue
		}
		if rj.index == 0 {
			r(0, rj.field("dependsOn"), fmt.Sprintf("replicated job %q is the first: it has no earlier replicated job to depend on, and JobSet rejects dependsOn here; remove it", rj.name))
			continue
		}
		for k, d := range deps {
			m, _ := d.(map[string]any)
			name := podutil.Str(m, "name")
			target := js.byName(name)
			field := rj.field(fmt.Sprintf("dependsOn[%d].name", k))
			switch {
			case target == nil:
				r(0, field, fmt.Sprintf("replicated job %q depends on %q, which is not a replicated job of this JobSet", rj.name, name))
			case target.index >= rj.index:
				r(0, field, fmt.Sprintf("replicated job %q depends on %q, which is not listed before it: JobSet only lets a replicated job depend on an earlier one; reorder spec.replicatedJobs", rj.name, name))
			}
		}
	}
}

// checkSuccessTargets: successPolicy.targetReplicatedJobs names an unknown replicated job.
func checkSuccessTargets(js *jobSet, r report) {
	targets := podutil.List(podutil.Map(js.content, "spec", "successPolicy"), "targetReplicatedJobs")
	for k, t := range targets {
		name, _ := t.(string)
		if js.byName(name) == nil {
			r(0, "spec.successPolicy.targetReplicatedJobs["+strconv.Itoa(k)+"]", fmt.Sprintf("successPolicy targets %q, which is not a replicated job of this JobSet: JobSet rejects it", name))
		}
	}
}

// checkIndexed: a replicated job reached by hostname must be Indexed, and
// its parallelism should equal its completions.
func checkIndexed(js *jobSet, r report) {
	for _, rj := range js.rjobs {
		if !rj.indexed() && reachedByHostname(js, rj) {
			r(0, rj.field("template.spec.completionMode"), fmt.Sprintf("replicated job %q is reached by hostname (%s-%s-<jobIndex>-<podIndex>) but its completionMode is %s: only Indexed Jobs give pods stable hostnames; remove completionMode (JobSet defaults to Indexed) or set it to Indexed",
				rj.name, js.name, rj.name, rj.mode))
		}
		if !rj.indexed() {
			continue
		}
		switch {
		case rj.hasCompl && rj.completions != rj.parallelism:
			r(rules.Warning, rj.field("template.spec.completions"), fmt.Sprintf("replicated job %q has completions %d but parallelism %d: pods that talk to each other (distributed training, MPI) must all run at once, which this prevents; set both to %d (ignore for a work queue)",
				rj.name, rj.completions, rj.parallelism, max(rj.completions, rj.parallelism)))
		case !rj.hasCompl && rj.parallelism > 1:
			r(rules.Warning, rj.field("template.spec.parallelism"), fmt.Sprintf("replicated job %q sets parallelism %d but no completions: an Indexed Job needs completions; set completions: %d",
				rj.name, rj.parallelism, rj.parallelism))
		}
	}
}

// reachedByHostname reports whether the replicated job is the coordinator or
// whether any container of the JobSet names one of its pod hostnames
// ("<jobset>-<rjob>-") in its command, args or env.
func reachedByHostname(js *jobSet, target *rjob) bool {
	if podutil.Str(js.coordinator, "replicatedJob") == target.name {
		return true
	}
	prefix := js.name + "-" + target.name + "-"
	for _, rj := range js.rjobs {
		for _, c := range rj.containers {
			for _, key := range []string{"command", "args"} {
				for _, el := range podutil.List(c.M, key) {
					if s, _ := el.(string); strings.Contains(s, prefix) {
						return true
					}
				}
			}
			for _, e := range podutil.List(c.M, "env") {
				m, _ := e.(map[string]any)
				if strings.Contains(podutil.Str(m, "value"), prefix) {
					return true
				}
			}
		}
	}
	return false
}
