package compiler

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// JobSetAPIVersion is the JobSet API kiln emits.
const JobSetAPIVersion = "jobset.x-k8s.io/v1alpha2"

// completionIndexPath is the downward-API path of an Indexed Job pod's completion index.
const completionIndexPath = "metadata.annotations['batch.kubernetes.io/job-completion-index']"

// frameworkEnv lists the env variables kiln sets for a framework.
func frameworkEnv(framework string) map[string]bool {
	switch framework {
	case "pytorch":
		return map[string]bool{"MASTER_ADDR": true, "MASTER_PORT": true, "NODE_RANK": true}
	case "tensorflow":
		return map[string]bool{"TASK_INDEX": true, "TF_CONFIG": true}
	}
	return map[string]bool{"RANK": true, "WORLD_SIZE": true, "COORDINATOR_ADDR": true, "COORDINATOR_PORT": true}
}

// jobSet emits the JobSet of a training job: replicated job "worker" (an
// Indexed Job of `nodes` pods), plus "ps" for tensorflow parameter servers.
// JobSet gives every pod the stable hostname
// <jobset>-<replicatedJob>-<jobIndex>-<podIndex>.<jobset> through the
// headless Service it creates, so kiln creates no Service.
func (e *emitter) jobSet(name string, t *Training) *yaml.Node {
	path := "spec.training." + name
	p := e.at(path)
	fp := e.at(path + ".framework")
	spec := mapping(p)
	if hasCoordinator(t) {
		add(spec, field{"coordinator", mapping(fp,
			field{"replicatedJob", str(fp, workerJob)},
			field{"jobIndex", num(fp, 0)},
			field{"podIndex", num(fp, 0)},
		)})
	}
	add(spec, field{"network", mapping(p, field{"enableDNSHostnames", boolean(p, true)})})
	success := mapping(p, field{"operator", str(p, "All")})
	if t.ParameterServers > 0 {
		// Parameter servers never exit: the JobSet is done when the workers are.
		add(success, field{"targetReplicatedJobs", strs(p, []string{workerJob})})
	}
	add(spec,
		field{"successPolicy", success},
		field{"failurePolicy", mapping(e.at(path+".maxRestarts"), field{"maxRestarts", num(e.at(path+".maxRestarts"), t.MaxRestarts)})},
	)
	jobs := []*yaml.Node{e.replicatedJob(name, t, workerJob, t.Nodes, e.at(path+".nodes"))}
	if t.ParameterServers > 0 {
		jobs = append(jobs, e.replicatedJob(name, t, psJob, t.ParameterServers, e.at(path+".parameterServers")))
	}
	add(spec, field{"replicatedJobs", seq(p, jobs...)})
	return object(p, JobSetAPIVersion, "JobSet", e.metadata(p, name, true, nil), spec)
}

// replicatedJob emits one replicated job: one Indexed Job of pods pods that
// fails on the first pod failure (the JobSet's failurePolicy restarts it).
func (e *emitter) replicatedJob(name string, t *Training, rjob string, pods int, np pos) *yaml.Node {
	path := "spec.training." + name
	p := e.at(path)
	main := e.mainContainer(name, t, rjob)
	ps := podSource{
		path:          path,
		init:          append(indexed(path, "init", t.Init, false), indexed(path, "sidecars", t.Sidecars, true)...),
		containers:    []ctrSource{main},
		security:      t.Security,
		restartPolicy: "Never",
	}
	job := mapping(p,
		field{"parallelism", num(np, pods)},
		field{"completions", num(np, pods)},
		field{"completionMode", str(p, "Indexed")},
		field{"backoffLimit", num(p, 0)},
		field{"template", e.podTemplate(name, ps)},
	)
	return mapping(p,
		field{"name", str(p, rjob)},
		field{"replicas", num(p, 1)},
		field{"template", mapping(p, field{"spec", job})},
	)
}

// mainContainer is the training container of a replicated job, launched the
// way its framework expects.
func (e *emitter) mainContainer(name string, t *Training, rjob string) ctrSource {
	path := "spec.training." + name
	fp := e.at(path + ".framework")
	pp := e.at(path + ".port")
	c := &Container{Name: mainContainer, Image: t.Image, Env: t.Env, Mounts: t.Mounts, Resources: t.Resources}
	cs := ctrSource{path: path, c: c, command: t.Command, args: t.Args}
	if rjob == workerJob {
		cs.gpus = t.GPUsPerNode
	}
	coordinator := hostname(name, workerJob, 0) + "." + name
	port := strconv.Itoa(t.Port)
	switch t.Framework {
	case "pytorch":
		nproc := t.GPUsPerNode
		if nproc == 0 {
			nproc = 1
		}
		cs.command = []string{"torchrun"}
		cs.args = append([]string{
			"--nnodes=" + strconv.Itoa(t.Nodes),
			"--nproc_per_node=" + strconv.Itoa(nproc),
			"--node_rank=$(NODE_RANK)",
			"--master_addr=$(MASTER_ADDR)",
			"--master_port=$(MASTER_PORT)",
		}, append(torchrunTarget(t.Command), t.Args...)...)
		cs.env = []*yaml.Node{
			indexEnv(fp, "NODE_RANK"),
			envVar(fp, "MASTER_ADDR", coordinator),
			envVar(pp, "MASTER_PORT", port),
		}
		cs.ports = []portSource{{"torchrun", t.Port, pp}}
	case "tensorflow":
		cs.env = []*yaml.Node{
			indexEnv(fp, "TASK_INDEX"),
			envVar(fp, "TF_CONFIG", tfConfig(name, t, rjob)),
		}
		cs.ports = []portSource{{"tf-server", t.Port, pp}}
	default:
		cs.env = []*yaml.Node{
			indexEnv(fp, "RANK"),
			envVar(e.at(path+".nodes"), "WORLD_SIZE", strconv.Itoa(t.Nodes)),
			envVar(fp, "COORDINATOR_ADDR", coordinator),
			envVar(pp, "COORDINATOR_PORT", port),
		}
		cs.ports = []portSource{{"coordinator", t.Port, pp}}
	}
	return cs
}

// torchrunTarget turns the spec's command into torchrun's training target:
// a leading python interpreter is dropped (torchrun runs the script or
// module itself), so [python, -m, train] becomes [-m, train].
func torchrunTarget(command []string) []string {
	if len(command) > 0 {
		switch command[0] {
		case "python", "python3", "/usr/bin/python", "/usr/bin/python3", "/usr/local/bin/python", "/usr/local/bin/python3":
			return command[1:]
		}
	}
	return command
}

// tfConfig is the TF_CONFIG of a pod of replicated job rjob: the cluster
// (every worker and parameter server by its JobSet DNS name) and the task,
// whose index is the pod's completion index (expanded by the kubelet from
// TASK_INDEX). encoding/json sorts keys, so the text is deterministic.
func tfConfig(name string, t *Training, rjob string) string {
	cluster := map[string][]string{workerJob: addresses(name, workerJob, t.Nodes, t.Port)}
	if t.ParameterServers > 0 {
		cluster[psJob] = addresses(name, psJob, t.ParameterServers, t.Port)
	}
	b, _ := json.Marshal(map[string]any{
		"cluster": cluster,
		"task":    map[string]any{"type": rjob, "index": json.RawMessage("0")},
	})
	// The index is substituted per pod: $(TASK_INDEX) is a JSON number once expanded.
	return strings.Replace(string(b), `"index":0`, `"index":$(TASK_INDEX)`, 1)
}

func addresses(name, rjob string, pods, port int) []string {
	out := make([]string, pods)
	for i := range out {
		out[i] = fmt.Sprintf("%s.%s:%d", hostname(name, rjob, i), name, port)
	}
	return out
}

func envVar(p pos, name, value string) *yaml.Node {
	return mapping(p, field{"name", str(p, name)}, field{"value", str(p, value)})
}

// indexEnv is an env variable holding the pod's Job completion index.
func indexEnv(p pos, name string) *yaml.Node {
	return mapping(p,
		field{"name", str(p, name)},
		field{"valueFrom", mapping(p, field{"fieldRef", mapping(p, field{"fieldPath", str(p, completionIndexPath)})})},
	)
}

func itoa(i int) string { return strconv.Itoa(i) }
