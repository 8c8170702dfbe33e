package compiler

import (
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Job defaults kiln writes (the API server's would be the same for backoff,
// and "Allow" for concurrency: kiln picks Forbid so that a slow nightly run
// is never doubled).
const defaultConcurrency = "Forbid"

// maxCronJobName is the longest CronJob name: the controller names each
// Job <cronjob>-<minutes since the epoch> (11 characters with the dash), and
// the API server refuses longer CronJob names (validation.ValidateCronJob).
const maxCronJobName = 52

// jobPod is the pod source of a job: a service's containers, init
// containers and sidecars, restartPolicy Never (a failed pod is replaced,
// up to backoff times).
func (e *emitter) jobPod(name string, j *Job, hash bool) podSource {
	path := "spec.jobs." + name
	ps := podSource{
		path:          path,
		init:          append(indexed(path, "init", j.Init, false), indexed(path, "sidecars", j.Sidecars, true)...),
		containers:    indexed(path, "containers", j.Containers, false),
		security:      j.Security,
		pod:           j.Pod,
		spread:        e.selector(name),
		restartPolicy: "Never",
		shm:           j.SHM,
	}
	if hash {
		ps.configs = configsRead(j.Init, j.Sidecars, j.Containers)
	}
	return ps
}

// jobSpec is a batch/v1 JobSpec: backoff, the TTL and the pod template.
func (e *emitter) jobSpec(name string, j *Job, hash bool) *yaml.Node {
	path := "spec.jobs." + name
	p := e.at(path)
	spec := mapping(p)
	if j.Backoff != nil {
		add(spec, field{"backoffLimit", num(e.at(path+".backoff"), *j.Backoff)})
	}
	if j.TTLAfterFinished != "" {
		add(spec, field{"ttlSecondsAfterFinished", num(e.at(path+".ttlAfterFinished"), durationSeconds(j.TTLAfterFinished))})
	}
	add(spec, field{"template", e.podTemplate(name, e.jobPod(name, j, hash))})
	return spec
}

// job emits a one-off batch/v1 Job (schedule unset). Its pod template gets
// no config hash: a Job's template is immutable, so a hash that changed
// with a config would make every sync of the changed config fail.
func (e *emitter) job(name string, j *Job) *yaml.Node {
	p := e.at("spec.jobs." + name)
	return object(p, "batch/v1", "Job", e.metadata(p, name, true, nil), e.jobSpec(name, j, false))
}

// cronJob emits a batch/v1 CronJob: the schedule, its time zone, the
// concurrency policy, and a job template whose pods roll with the configs
// they read (the next run uses the new content).
func (e *emitter) cronJob(name string, j *Job) *yaml.Node {
	path := "spec.jobs." + name
	p := e.at(path)
	concurrency, cp := defaultConcurrency, p
	if j.Concurrency != "" {
		concurrency, cp = j.Concurrency, e.at(path+".concurrency")
	}
	spec := mapping(p, field{"schedule", str(e.at(path+".schedule"), j.Schedule)})
	if j.TimeZone != "" {
		add(spec, field{"timeZone", str(e.at(path+".timeZone"), j.TimeZone)})
	}
	add(spec,
		field{"concurrencyPolicy", str(cp, concurrency)},
		field{"jobTemplate", mapping(p,
			field{"metadata", mapping(p, field{"labels", stringMap(p, e.labels(name))})},
			field{"spec", e.jobSpec(name, j, true)},
		)},
	)
	return object(p, "batch/v1", "CronJob", e.metadata(p, name, true, nil), spec)
}
