package compiler

import (
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"strconv"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// JobSetAPIVersion is the JobSet API kiln emits.
const JobSetAPIVersion = "jobset.x-k8s.io/v1alpha2"

// completionIndexPath is the downward-API path of an Indexed Job pod's completion index.
const completionIndexPath = "metadata.annotations['batch.kubernetes.io/job-completion-index']"

// LabelQueue is the Kueue label that submits a JobSet to a LocalQueue.
const LabelQueue = "kueue.x-k8s.io/queue-name"

// maxEnvBytes is Linux's limit on one "NAME=value" string of a process's
// environment, NUL included: MAX_ARG_STRLEN, 32 pages of 4 KiB
// (include/uapi/linux/binfmts.h). A longer variable makes execve fail with
// E2BIG, so the container never starts.
const maxEnvBytes = 131072

// frameworkEnv lists the env variables kiln sets for a framework.
func frameworkEnv(framework string) map[string]bool {
	switch framework {
	case "pytorch":
		return map[string]bool{"PET_NNODES": true, "PET_NPROC_PER_NODE": true, "PET_NODE_RANK": true, "PET_MASTER_ADDR": true,
			"PET_MASTER_PORT": true, "PET_RDZV_BACKEND": true, "PET_RDZV_ENDPOINT": true, "PET_RDZV_ID": true}
	case "tensorflow":
		return map[string]bool{"TASK_INDEX": true, "TF_CONFIG": true}
	}
	return map[string]bool{"RANK": true, "WORLD_SIZE": true, "COORDINATOR_ADDR": true, "COORDINATOR_PORT": true}
}

// roleJob is one replicated job of a training job.
type roleJob struct {
	name string
	pods int
	at   string // the spec field that sets its size
}

// roleJobs lists the replicated jobs of a training job, in the order they
// are emitted: tensorflow's chief (with parameter servers: TF2's
// ParameterServerStrategy needs a coordinator), the workers, the ps.
func roleJobs(name string, t *Training) []roleJob {
	path := "spec.training." + name
	var out []roleJob
	if hasChief(t) {
		out = append(out, roleJob{chiefJob, 1, path + ".parameterServers"})
	}
	out = append(out, roleJob{workerJob, t.Nodes.Max, path + ".nodes"})
	if t.ParameterServers > 0 {
		out = append(out, roleJob{psJob, t.ParameterServers, path + ".parameterServers"})
	}
	return out
}

// hasChief reports whether a training job gets a chief replicated job.
func hasChief(t *Training) bool { return t.Framework == "tensorflow" && t.ParameterServers > 0 }

// preemptionRules reports whether the JobSet gets the failure-policy rule
// that restarts it without counting preemption against maxRestarts.
func (e *emitter) preemptionRules(t *Training) bool {
	return t.OnPreemption == "restart" && !e.app.JobSet.Less(jobSetFailureRules) && !e.app.Kube.Less(kubePodFailurePolicy)
}

// jobSet emits the JobSet of a training job. JobSet gives every pod the
// stable hostname <jobset>-<replicatedJob>-<jobIndex>-<podIndex>.<jobset>
// through the headless Service it creates, so kiln creates no Service and
// computes the coordinator's address itself (no spec.coordinator).
func (e *emitter) jobSet(name string, t *Training) *yaml.Node {
	path := "spec.training." + name
	p := e.at(path)
	spec := mapping(p)
	if t.TTLAfterFinished != "" {
		add(spec, field{"ttlSecondsAfterFinished", num(e.at(path+".ttlAfterFinished"), durationSeconds(t.TTLAfterFinished))})
	}
	add(spec, field{"network", mapping(p, field{"enableDNSHostnames", boolean(p, true)})})
	success := mapping(p, field{"operator", str(p, "All")})
	switch {
	case hasChief(t):
		// Workers and parameter servers serve until the chief is done.
		add(success, field{"targetReplicatedJobs", strs(p, []string{chiefJob})})
	case t.ParameterServers > 0:
		add(success, field{"targetReplicatedJobs", strs(p, []string{workerJob})})
	}
	mp := e.at(path + ".maxRestarts")
	failure := mapping(mp, field{"maxRestarts", num(mp, t.MaxRestarts)})
	if t.RestartStrategy != "" {
		add(failure, field{"restartStrategy", str(e.at(path+".restartStrategy"), t.RestartStrategy)})
	}
	if e.preemptionRules(t) {
		// A pod that fails because it was preempted, evicted or its node
		// drained fails its Job with reason PodFailurePolicy (the Job's
		// podFailurePolicy below); this rule restarts the JobSet for it
		// without spending a restart of maxRestarts.
		op := e.at(path + ".onPreemption")
		add(failure, field{"rules", seq(op, mapping(op,
			field{"name", str(op, "preemption")},
			field{"action", str(op, "RestartJobSetAndIgnoreMaxRestarts")},
			field{"onJobFailureReasons", strs(op, []string{"PodFailurePolicy"})},
		))})
	}
	add(spec, field{"successPolicy", success}, field{"failurePolicy", failure})
	var jobs []*yaml.Node
	for _, rj := range roleJobs(name, t) {
		jobs = append(jobs, e.replicatedJob(name, t, rj))
	}
	add(spec, field{"replicatedJobs", seq(p, jobs...)})
	var extra map[string]string
	if t.Queue != "" {
		extra = map[string]string{LabelQueue: t.Queue}
	}
	return object(p, JobSetAPIVersion, "JobSet", e.metadata(p, name, true, extra), spec)
}

// replicatedJob emits one replicated job: one Indexed Job of pods pods that
// fails on the first pod failure (the JobSet's failurePolicy restarts it).
func (e *emitter) replicatedJob(name string, t *Training, rj roleJob) *yaml.Node {
	path := "spec.training." + name
	p := e.at(path)
	np := e.at(rj.at)
	main := e.mainContainer(name, t, rj.name)
	shm := t.SHM
	ps := podSource{
		path:          path,
		init:          append(indexed(path, "init", t.Init, false), indexed(path, "sidecars", t.Sidecars, true)...),
		containers:    []ctrSource{main},
		security:      t.Security,
		restartPolicy: "Never",
		pod:           t.Pod,
		spread:        map[string]string{LabelName: name, LabelManagedBy: ManagedBy, "jobset.sigs.k8s.io/replicatedjob-name": rj.name},
		shm:           &shm,
	}
	job := mapping(p,
		field{"parallelism", num(np, rj.pods)},
		field{"completions", num(np, rj.pods)},
		field{"completionMode", str(p, "Indexed")},
		field{"backoffLimit", num(p, 0)},
	)
	if e.preemptionRules(t) {
		op := e.at(path + ".onPreemption")
		add(job, field{"podFailurePolicy", mapping(op, field{"rules", seq(op, mapping(op,
			field{"action", str(op, "FailJob")},
			field{"onPodConditions", seq(op, mapping(op, field{"type", str(op, "DisruptionTarget")}, field{"status", str(op, "True")}))},
		))})})
	}
	add(job, field{"template", e.podTemplate(name, ps)})
	return mapping(p,
		field{"name", str(p, rj.name)},
		field{"replicas", num(p, 1)},
		field{"template", mapping(p, field{"spec", job})},
	)
}

// coordinatorAddr is the DNS name of pod 0 of the workers.
func coordinatorAddr(name string) string { return hostname(name, workerJob, 0) + "." + name }

// mainContainer is the training container of a replicated job, launched the
// way its framework expects.
func (e *emitter) mainContainer(name string, t *Training, rjob string) ctrSource {
	path := "spec.training." + name
	fp := e.at(path + ".framework")
	pp := e.at(path + ".port")
	np := e.at(path + ".nodes")
	c := &Container{Name: mainContainer, Image: t.Image, Env: t.Env, EnvFrom: t.EnvFrom, Files: t.Files, Mounts: t.Mounts, Resources: t.Resources}
	cs := ctrSource{path: path, c: c, command: t.Command, args: t.Args}
	switch rjob {
	case workerJob:
		cs.gpus = t.GPUsPerNode
	case chiefJob, psJob:
		if r := t.Roles[rjob]; r != nil && r.Resources != nil {
			// The role's own resources, positioned at roles.<role>.resources.
			c.Resources = nil
			cs.resources, cs.resPath = r.Resources, path+".roles."+rjob+".resources"
		}
	}
	port := strconv.Itoa(t.Port)
	switch t.Framework {
	case "pytorch":
		// Kubeflow Trainer's way: torchrun (torch.distributed.run) reads
		// PET_<FLAG> as the default of each --<flag>, so the user's command
		// stays as written and flags the user gives still win.
		nproc := t.GPUsPerNode
		if nproc == 0 {
			nproc = 1
		}
		cs.command, _ = torchLaunch(t.Command)
		nnodes := strconv.Itoa(t.Nodes.Max)
		if t.Nodes.Elastic {
			nnodes = strconv.Itoa(t.Nodes.Min) + ":" + strconv.Itoa(t.Nodes.Max)
		}
		cs.env = []*yaml.Node{
			envVar(np, "PET_NNODES", nnodes),
			envVar(e.at(path+".gpusPerNode"), "PET_NPROC_PER_NODE", strconv.Itoa(nproc)),
		}
		if t.Nodes.Elastic {
			// Elastic: the c10d rendezvous on pod 0 assigns ranks.
			cs.env = append(cs.env,
				envVar(np, "PET_RDZV_BACKEND", "c10d"),
				envVar(pp, "PET_RDZV_ENDPOINT", coordinatorAddr(name)+":"+port),
				envVar(np, "PET_RDZV_ID", name),
			)
		} else {
			cs.env = append(cs.env,
				indexEnv(fp, "PET_NODE_RANK"),
				envVar(fp, "PET_MASTER_ADDR", coordinatorAddr(name)),
				envVar(pp, "PET_MASTER_PORT", port),
			)
		}
		cs.ports = []portSource{{"torchrun", t.Port, pp}}
	case "tensorflow":
		cs.env = []*yaml.Node{
			indexEnv(fp, "TASK_INDEX"),
			envVar(fp, "TF_CONFIG", tfConfig(name, t, rjob, "$(TASK_INDEX)")),
		}
		cs.ports = []portSource{{"tf-server", t.Port, pp}}
	default:
		cs.env = []*yaml.Node{
			indexEnv(fp, "RANK"),
			envVar(np, "WORLD_SIZE", strconv.Itoa(t.Nodes.Max)),
			envVar(fp, "COORDINATOR_ADDR", coordinatorAddr(name)),
			envVar(pp, "COORDINATOR_PORT", port),
		}
		cs.ports = []portSource{{"coordinator", t.Port, pp}}
	}
	return cs
}

// pythonInterpreter matches python, python3, python3.11 (any directory).
var pythonInterpreter = regexp.MustCompile(`^python([0-9]+(\.[0-9]+)?)?$`)

// torchLaunch returns the command that runs the user's command under
// torchrun. The command is kept when it already is a launcher (torchrun,
// python -m torch.distributed.run) or something kiln cannot see into
// (bash -c, accelerate launch, an entry point): those get torchrun's settings
// from the PET_* variables. A Python interpreter running a script or a
// module becomes that interpreter running torch.distributed.run (torchrun's
// module: same flags, and the workers use that interpreter, so an
// interpreter outside PATH works); its flags stay on the launcher. A .py
// script is prefixed with torchrun.
func torchLaunch(cmd []string) ([]string, error) {
	base := path.Base(cmd[0])
	switch {
	case base == "torchrun":
		return cmd, nil
	case pythonInterpreter.MatchString(base):
		var flags []string
		for i := 1; i < len(cmd); i++ {
			a := cmd[i]
			switch {
			case a == "-m":
				if i+1 == len(cmd) {
					return nil, fmt.Errorf("the command ends in -m without a module; give one, e.g. [python, -m, train]")
				}
				if m := cmd[i+1]; m == "torch.distributed.run" || m == "torch.distributed.launch" {
					return cmd, nil
				}
				return launcher(cmd[0], flags, cmd[i:]), nil
			case a == "-c" || strings.HasPrefix(a, "-c"):
				return nil, fmt.Errorf("torchrun runs a script or a module, not -c code; put the code in a script, or use framework generic")
			case a == "-":
				return nil, fmt.Errorf("torchrun cannot run a script from standard input; give the script's path")
			case a == "--":
				if i+1 == len(cmd) {
					return nil, fmt.Errorf("the command names no script after --")
				}
				return launcher(cmd[0], flags, cmd[i+1:]), nil
			case !strings.HasPrefix(a, "-"):
				return launcher(cmd[0], flags, cmd[i:]), nil
			case a == "-W" || a == "-X":
				if i+1 == len(cmd) {
					return nil, fmt.Errorf("interpreter flag %s needs a value", a)
				}
				flags = append(flags, a, cmd[i+1])
				i++
			default:
				flags = append(flags, a)
			}
		}
		return nil, fmt.Errorf("the command runs %s without a script or module; give one, e.g. [%s, train.py] or [%s, -m, train]", cmd[0], cmd[0], cmd[0])
	case strings.HasSuffix(base, ".py"):
		return append([]string{"torchrun"}, cmd...), nil
	}
	return cmd, nil
}

func launcher(interp string, flags, target []string) []string {
	out := append([]string{interp}, flags...)
	out = append(out, "-m", "torch.distributed.run")
	return append(out, target...)
}

// tfConfig is the TF_CONFIG of a pod of replicated job rjob: the cluster
// (every chief, worker and parameter server by its JobSet DNS name) and the
// task, whose index is index: "$(TASK_INDEX)", the pod's completion index
// expanded by the kubelet. encoding/json sorts keys, so the text is
// deterministic.
func tfConfig(name string, t *Training, rjob, index string) string {
	cluster := map[string][]string{workerJob: addresses(name, workerJob, t.Nodes.Max, t.Port)}
	if t.ParameterServers > 0 {
		cluster[psJob] = addresses(name, psJob, t.ParameterServers, t.Port)
	}
	if hasChief(t) {
		cluster[chiefJob] = addresses(name, chiefJob, 1, t.Port)
	}
	b, _ := json.Marshal(map[string]any{
		"cluster": cluster,
		"task":    map[string]any{"type": rjob, "index": json.RawMessage("0")},
	})
	return strings.Replace(string(b), `"index":0`, `"index":`+index, 1)
}

// tfConfigBytes is the size of the longest TF_CONFIG=value string a pod of
// rjob gets once the kubelet has expanded the index.
func tfConfigBytes(name string, t *Training, rjob string, pods int) int {
	return len("TF_CONFIG=") + len(tfConfig(name, t, rjob, strconv.Itoa(pods-1))) + 1
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
