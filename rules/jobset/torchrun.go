package jobset

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/kilnhq/kiln/rules/internal/podutil"
)

// launchValue is one torchrun setting found in a container: where it is and what it says.
type launchValue struct {
	field string // path of the command/args element or env value
	text  string // as written, for messages: "--nnodes=8", "PET_NNODES=8"
	value string // after $(VAR) expansion from literal env values
}

// nodeRange is a parsed --nnodes: N, or MIN:MAX for elastic jobs.
type nodeRange struct{ min, max int64 }

func (n nodeRange) String() string {
	if n.min == n.max {
		return strconv.FormatInt(n.min, 10)
	}
	return fmt.Sprintf("%d:%d", n.min, n.max)
}

func (n nodeRange) contains(v int64) bool { return n.min <= v && v <= n.max }

// parseNodes parses "8" or "4:8"; ok is false for anything else ("$(N)", "auto").
func parseNodes(s string) (nodeRange, bool) {
	lo, hi, elastic := strings.Cut(strings.TrimSpace(s), ":")
	min, err := strconv.ParseInt(lo, 10, 64)
	if err != nil || min < 1 {
		return nodeRange{}, false
	}
	if !elastic {
		return nodeRange{min, min}, true
	}
	max, err := strconv.ParseInt(hi, 10, 64)
	if err != nil || max < min {
		return nodeRange{}, false
	}
	return nodeRange{min, max}, true
}

// launchFlags finds torchrun's --nnodes and --nproc_per_node (also spelled
// --nproc-per-node) in a container's command and args, and PET_NNODES and
// PET_NPROC_PER_NODE in its env (torchrun reads PET_<FLAG> when the flag is
// absent). Elements that hold a shell script ("bash -c '...'") are split on
// white space. $(VAR) references are expanded from literal env values.
func launchFlags(c podutil.Container) (nnodes, nproc []launchValue) {
	env := map[string]string{}
	for i, e := range podutil.List(c.M, "env") {
		m, _ := e.(map[string]any)
		name := podutil.Str(m, "name")
		v, isStr := m["value"].(string)
		if !isStr {
			if n, ok := podutil.AsInt(m["value"]); ok {
				v, isStr = strconv.FormatInt(n, 10), true
			}
		}
		if !isStr {
			continue
		}
		env[name] = v
		lv := launchValue{field: fmt.Sprintf("%s.env[%d].value", c.Path, i), text: name + "=" + v, value: v}
		switch name {
		case "PET_NNODES":
			nnodes = append(nnodes, lv)
		case "PET_NPROC_PER_NODE":
			nproc = append(nproc, lv)
		}
	}
	expand := func(s string) string {
		for name, v := range env {
			s = strings.ReplaceAll(s, "$("+name+")", v)
		}
		return s
	}
	for _, key := range []string{"command", "args"} {
		for i, el := range podutil.List(c.M, key) {
			s, _ := el.(string)
			tokens := strings.Fields(s)
			for j := 0; j < len(tokens); j++ {
				flag, val, hasVal := strings.Cut(tokens[j], "=")
				var dst *[]launchValue
				switch flag {
				case "--nnodes":
					dst = &nnodes
				case "--nproc_per_node", "--nproc-per-node":
					dst = &nproc
				default:
					continue
				}
				text, at := tokens[j], i
				if !hasVal {
					if j+1 >= len(tokens) {
						// "--nnodes" then the value in the next element.
						next, _ := podutil.At(c.M, fmt.Sprintf("%s[%d]", key, i+1)).(string)
						if next == "" || len(strings.Fields(next)) != 1 {
							continue
						}
						val, at = strings.TrimSpace(next), i+1
					} else {
						j++
						val = tokens[j]
					}
					text = flag + " " + val
				}
				val = strings.Trim(val, `"'`)
				if x := expand(val); x != val {
					text += " (= " + x + ")"
					val = x
				}
				*dst = append(*dst, launchValue{field: fmt.Sprintf("%s.%s[%d]", c.Path, key, at), text: text, value: val})
			}
		}
	}
	return nnodes, nproc
}

// launcherAt returns the field of the element that starts torchrun (the
// torchrun command, or python -m torch.distributed.run / .launch) in a
// container's command or args, or "" when it starts none.
func launcherAt(c podutil.Container) string {
	for _, key := range []string{"command", "args"} {
		for i, el := range podutil.List(c.M, key) {
			s, _ := el.(string)
			for _, tok := range strings.Fields(s) {
				tok = strings.Trim(tok, `"';&|()`)
				if tok == "torchrun" || strings.HasSuffix(tok, "/torchrun") ||
					tok == "torch.distributed.run" || tok == "torch.distributed.launch" {
					return fmt.Sprintf("%s.%s[%d]", c.Path, key, i)
				}
			}
		}
	}
	return ""
}

// mentionsNnodes reports whether --nnodes appears in the container's
// command or args in a form launchFlags could not read (e.g. "--nnodes=${N}"
// in a script): the size is set, just not known here.
func mentionsNnodes(c podutil.Container) bool {
	for _, key := range []string{"command", "args"} {
		for _, el := range podutil.List(c.M, key) {
			if s, _ := el.(string); strings.Contains(s, "--nnodes") {
				return true
			}
		}
	}
	return false
}

// setsNnodes reports whether the container sets PET_NNODES in env at all
// (a literal or from a ConfigMap, Secret or field): torchrun then reads it.
func setsNnodes(c podutil.Container) bool {
	for _, e := range podutil.List(c.M, "env") {
		m, _ := e.(map[string]any)
		if podutil.Str(m, "name") == "PET_NNODES" {
			return true
		}
	}
	return false
}

// gpuLimit returns the container's nvidia.com/gpu limit (else request).
func gpuLimit(c podutil.Container) (int64, bool) {
	res := podutil.Map(c.M, "resources")
	for _, k := range []string{"limits", "requests"} {
		if n, ok := quantityInt(podutil.Map(res, k)["nvidia.com/gpu"]); ok {
			return n, true
		}
	}
	return 0, false
}

// quantityInt reads a whole-number quantity written as a number or a string.
func quantityInt(v any) (int64, bool) {
	if n, ok := podutil.AsInt(v); ok {
		return n, true
	}
	if s, ok := v.(string); ok {
		n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		return n, err == nil
	}
	return 0, false
}

// checkTorchrun compares --nnodes with the pods that run torchrun, and
// --nproc_per_node with the container's GPUs.
func checkTorchrun(js *jobSet, r report) {
	type found struct {
		rj  *rjob
		val launchValue
		n   nodeRange
	}
	var all []found
	// Launchers without --nnodes: torchrun then runs each pod as a
	// single-node job (its default is --nnodes=1:1).
	type bare struct {
		rj    *rjob
		field string
	}
	var bares []bare
	// Pods of every replicated job that launches torchrun: a leader/worker
	// split (leader 1 pod + workers 7 pods, all with --nnodes=8) is one job.
	var group int64
	for _, rj := range js.rjobs {
		launches := false
		for _, c := range rj.containers {
			if c.Init {
				continue
			}
			nnodes, nproc := launchFlags(c)
			if at := launcherAt(c); at != "" && len(nnodes) == 0 && !setsNnodes(c) && !mentionsNnodes(c) {
				bares = append(bares, bare{rj, at})
				launches = true
			}
			for _, v := range nnodes {
				if n, ok := parseNodes(v.value); ok {
					all = append(all, found{rj, v, n})
					launches = true
				}
			}
			if gpus, ok := gpuLimit(c); ok {
				for _, v := range nproc {
					n, err := strconv.ParseInt(v.value, 10, 64)
					if err == nil && n > gpus {
						r(0, v.field, fmt.Sprintf("%s starts %d processes per pod but container %q is limited to %d nvidia.com/gpu: ranks beyond %d find no GPU; set --nproc_per_node to %d or raise the limit",
							v.text, n, c.Name, gpus, gpus-1, gpus))
					}
				}
			}
		}
		if launches {
			group += rj.pods()
		}
	}
	for _, b := range bares {
		if group <= 1 {
			continue
		}
		r(0, b.field, fmt.Sprintf("torchrun runs without --nnodes (or PET_NNODES) in %d pods (replicated job %q: replicas %d × parallelism %d): it defaults to one node, so every pod trains on its own as a separate single-node job and they never exchange gradients; set --nnodes=%d with a rendezvous (--rdzv-endpoint, or --master_addr and --node_rank from JOB_COMPLETION_INDEX)",
			group, b.rj.name, b.rj.replicas, b.rj.parallelism, group))
	}
	for _, f := range all {
		pods := f.rj.pods()
		if f.n.contains(pods) || f.n.contains(group) {
			continue
		}
		size := fmt.Sprintf("replicas %d × parallelism %d", f.rj.replicas, f.rj.parallelism)
		effect := "the pods beyond it fail or wait at rendezvous forever"
		if pods < f.n.min {
			effect = "the rendezvous waits forever for nodes that never start"
		}
		want := fmt.Sprintf("%d", f.n.min)
		if f.n.min != f.n.max {
			want = fmt.Sprintf("%d to %d", f.n.min, f.n.max)
		}
		r(0, f.val.field, fmt.Sprintf("%s but replicated job %q runs %d pods (%s): torchrun expects %s nodes, so %s; set --nnodes to %d, or run %s pods",
			f.val.text, f.rj.name, pods, size, f.n, effect, pods, want))
	}
}
