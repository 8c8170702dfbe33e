package compiler

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	_ "time/tzdata" // CronJob time zones are checked the same on every host

	"github.com/kilnhq/kiln/internal/editdist"
	"github.com/kilnhq/kiln/manifest"
	"github.com/robfig/cron/v3"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Versions that gate what kiln emits.
var (
	// LatestJobSet is the newest JobSet release kiln knows: the default target.jobset.
	LatestJobSet = JobSetVersion{0, 10}
	// jobSetV1alpha2 is the first release serving jobset.x-k8s.io/v1alpha2.
	jobSetV1alpha2 = JobSetVersion{0, 2}
	// jobSetTTL is the first release with spec.ttlSecondsAfterFinished.
	jobSetTTL = JobSetVersion{0, 3}
	// jobSetFailureRules is the first release with failurePolicy.rules
	// (KEP-262, configurable failure policy).
	jobSetFailureRules = JobSetVersion{0, 5}
	// jobSetRestartStrategy is the first release with
	// failurePolicy.restartStrategy (kubernetes-sigs/jobset#686, merged
	// October 2024, released in v0.7).
	jobSetRestartStrategy = JobSetVersion{0, 7}

	kubeSeccompField   = manifest.KubeVersion{Major: 1, Minor: 19}
	kubeIndexedJob     = manifest.KubeVersion{Major: 1, Minor: 22}
	kubePodSecurity    = manifest.KubeVersion{Major: 1, Minor: 23}
	kubeGRPCProbe      = manifest.KubeVersion{Major: 1, Minor: 24}
	kubeNativeSidecars = manifest.KubeVersion{Major: 1, Minor: 29}
	// kubePodFailurePolicy: Job podFailurePolicy is on by default from 1.26 (beta).
	kubePodFailurePolicy = manifest.KubeVersion{Major: 1, Minor: 26}
	// kubeRelaxedServiceNames: Service names may be DNS-1123 labels (start
	// with a digit) from 1.36, where the RelaxedServiceNameValidation gate is
	// beta and on (k8s.io/kubernetes pkg/features/kube_features.go); before,
	// ValidateServiceName requires DNS-1035 labels.
	kubeRelaxedServiceNames = manifest.KubeVersion{Major: 1, Minor: 36}
	// kubeCronJobV1: batch/v1 CronJob is served from 1.21.
	kubeCronJobV1 = manifest.KubeVersion{Major: 1, Minor: 21}
	// kubeCronJobTimeZone: CronJob timeZone is on by default from 1.25 (beta; GA in 1.27).
	kubeCronJobTimeZone = manifest.KubeVersion{Major: 1, Minor: 25}
	// kubeJobTTL: ttlSecondsAfterFinished is on by default from 1.21 (beta).
	kubeJobTTL = manifest.KubeVersion{Major: 1, Minor: 21}
)

// maxHostname is the longest DNS label, hence the longest pod hostname and label value.
const maxHostname = 63

// maxJobSetPodName is the longest deterministic part of a JobSet pod name:
// the JobSet webhook (kubernetes-sigs/jobset pkg/webhooks/jobset_webhook.go,
// ValidateCreate) appends a 5-character suffix ("-abcde", the Job
// controller's random one) to <jobset>-<replicatedJob>-<jobIndex>-<podIndex>
// for the last pod and requires a DNS-1035 label (IsDNS1035Label), so at
// most 63-6 = 57 characters.
const maxJobSetPodName = maxHostname - len("-abcde")

// Names kiln gives to what it adds.
const (
	tmpVolume     = "tmp"
	shmVolume     = "shm"
	mainContainer = "trainer"
	workerJob     = "worker"
	psJob         = "ps"
	chiefJob      = "chief"
)

// checker collects positioned errors and warnings for one spec.
type checker struct {
	spec  *manifest.Object
	errs  []error
	warns []error
}

func (c *checker) errorf(field, format string, args ...any) {
	c.errs = append(c.errs, &manifest.Error{Pos: c.spec.Locate(field), Msg: fmt.Sprintf(format, args...)})
}

func (c *checker) warnf(field, format string, args ...any) {
	c.warns = append(c.warns, &manifest.Error{Pos: c.spec.Locate(field), Msg: fmt.Sprintf(format, args...)})
}

// validate checks what the CUE schema cannot express well, parses the
// targets and reads the config files. It returns errors and warnings.
func validate(spec *manifest.Object, a *App) (errs, warns []error) {
	c := &checker{spec: spec}
	c.targets(a)
	s := &a.Spec
	c.labels("metadata.labels", a.Metadata.Labels)
	c.annotations("metadata.annotations", a.Metadata.Annotations)
	if s.Namespace != nil {
		if a.Metadata.Namespace == "" {
			c.errorf("spec.namespace", "spec.namespace asks for a Namespace object, but metadata.namespace is not set; name the namespace there")
		}
		if s.Namespace.Security != nil && a.Kube.Less(kubePodSecurity) {
			c.errorf("spec.namespace.security", "Pod Security Admission labels need Kubernetes %s or newer (on by default from 1.23); target.kubernetes is %s", kubePodSecurity, a.Kube)
		}
		c.labels("spec.namespace.labels", s.Namespace.Labels)
		for _, k := range sortedKeys(s.Namespace.Labels) {
			if strings.HasPrefix(k, psaLabelPrefix) {
				c.errorf(sub("spec.namespace.labels", k), "label %s is set by spec.namespace.security; set the level there", k)
			}
		}
	}
	c.readConfigFiles(a)
	for _, name := range sortedKeys(s.Volumes) {
		c.volume(name, s.Volumes[name])
	}
	c.routeTarget(a)
	if pool := s.Target.GPUPool; pool != nil {
		c.labels("spec.target.gpuPool.nodeSelector", pool.NodeSelector)
		c.tolerations("spec.target.gpuPool.tolerations", pool.Tolerations)
	}
	routeNames := map[string]string{}
	for _, name := range sortedKeys(s.Services) {
		c.service(a, name, s.Services[name])
		c.routes(a, name, s.Services[name], routeNames)
		c.network(a, name, s.Services[name])
	}
	for _, name := range sortedKeys(s.Jobs) {
		c.job(a, name, s.Jobs[name])
	}
	for _, name := range sortedKeys(s.Training) {
		c.training(a, name, s.Training[name])
	}
	return c.errs, c.warns
}

// labels checks label keys and values with the API server's own functions.
func (c *checker) labels(path string, m map[string]string) {
	for _, k := range sortedKeys(m) {
		f := sub(path, k)
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			c.errorf(f, "label key %q is not valid: %s", k, strings.Join(errs, "; "))
		}
		if errs := validation.IsValidLabelValue(m[k]); len(errs) > 0 {
			c.errorf(f, "label value %q is not valid: %s", m[k], strings.Join(errs, "; "))
		}
	}
}

func (c *checker) annotations(path string, m map[string]string) {
	for _, k := range sortedKeys(m) {
		if errs := validation.IsQualifiedName(strings.ToLower(k)); len(errs) > 0 {
			c.errorf(sub(path, k), "annotation key %q is not valid: %s", k, strings.Join(errs, "; "))
		}
	}
}

func (c *checker) targets(a *App) {
	a.Kube = manifest.LatestKube
	if t := a.Spec.Target.Kubernetes; t != "" {
		v, err := manifest.ParseKubeVersion(t)
		switch {
		case err != nil:
			c.errorf("spec.target.kubernetes", "%v", err)
		case v.Less(manifest.OldestKube) || manifest.LatestKube.Less(v):
			c.errorf("spec.target.kubernetes", "target.kubernetes %s is outside the range kiln knows (%s to %s)", v, manifest.OldestKube, manifest.LatestKube)
		default:
			a.Kube = v
		}
	}
	if a.Kube.Less(kubeSeccompField) {
		c.errorf("spec.target.kubernetes", "kiln sets securityContext.seccompProfile, a field Kubernetes %s added; target.kubernetes %s does not know it: target %s or newer", kubeSeccompField, a.Kube, kubeSeccompField)
	}
	a.JobSet = LatestJobSet
	if t := a.Spec.Target.JobSet; t != "" {
		parts := strings.Split(strings.TrimPrefix(t, "v"), ".")
		maj, _ := strconv.Atoi(parts[0])
		min, _ := strconv.Atoi(parts[1])
		a.JobSet = JobSetVersion{maj, min}
	}
}

func (c *checker) volume(name string, v *Volume) {
	path := "spec.volumes." + name
	n := 0
	for _, set := range []bool{v.Scratch != nil, v.Shared != nil, v.Claim != nil} {
		if set {
			n++
		}
	}
	if n != 1 {
		c.errorf(path, "volume %q must be exactly one of scratch (an emptyDir per pod), shared (a PVC kiln creates) or claim (an existing PVC); it sets %d", name, n)
	}
	if name == tmpVolume || name == shmVolume {
		c.errorf(path, "volume name %q is reserved: kiln mounts a writable emptyDir named %q (at /tmp in every container, and a memory-backed one at /dev/shm in pods with shm); pick another name", name, name)
	}
	if strings.HasPrefix(name, "config-") || strings.HasPrefix(name, "secret-") {
		c.errorf(path, "volume names starting with config- or secret- are reserved for the config and Secret volumes kiln adds for files:; pick another name")
	}
	if v.Scratch != nil {
		c.quantity(path+".scratch.sizeLimit", v.Scratch.SizeLimit, true)
	}
	if v.Shared != nil {
		c.quantity(path+".shared.size", v.Shared.Size, true)
	}
}

// quantity rejects a byte quantity in milli units (512m is 0.512 bytes).
func (c *checker) quantity(field string, q Quantity, bytes bool) {
	if bytes && strings.HasSuffix(string(q), "m") {
		c.errorf(field, "%s is %s thousandths of a byte (the suffix m means milli); write Mi for mebibytes, e.g. %sMi", q, strings.TrimSuffix(string(q), "m"), strings.TrimSuffix(string(q), "m"))
	}
}

func (c *checker) resources(path string, r *Resources) {
	if r != nil {
		c.quantity(path+".memory", r.Memory, true)
	}
}

// podContainer is one container of a pod being checked: its spec path and
// fields, and the port names it gets besides its own (service ports, a
// framework's port).
type podContainer struct {
	path    string
	c       *Container
	sidecar bool
	ports   map[string]bool
}

func (c *checker) service(a *App, name string, s *Service) {
	path := "spec.services." + name
	if len(s.Sidecars) > 0 {
		c.sidecarGate(a, path+".sidecars")
	}
	cs := podContainers(path, s.Init, s.Sidecars, s.Containers)
	// Service ports become ports of the first container unless another
	// container declares a port of that name (service.go).
	for _, pc := range cs {
		if pc.path == path+".containers[0]" {
			pc.ports = map[string]bool{}
			for p := range s.Ports {
				if !declaresPort(s, p) {
					pc.ports[p] = true
				}
			}
			for i := range cs {
				if cs[i].path == pc.path {
					cs[i].ports = pc.ports
				}
			}
		}
	}
	c.pod(a, path, cs, s.Pod)
	c.scaling(path, s, cs)
	if s.SHM != nil {
		c.quantity(path+".shm", *s.SHM, true)
	}
	if _, clash := a.Spec.Training[name]; clash {
		c.errorf(path, "service %q has the name of training job %q, whose JobSet gets a headless Service of that name; rename one", name, name)
	}
	if len(s.Ports) > 0 && a.Kube.Less(kubeRelaxedServiceNames) {
		if errs := validation.IsDNS1035Label(name); len(errs) > 0 {
			c.errorf(path, "service key %q names a Service, and before Kubernetes %s Service names must start with a letter (DNS-1035); target.kubernetes is %s: rename it, e.g. %q, or target %s", name, kubeRelaxedServiceNames, a.Kube, "svc-"+name, kubeRelaxedServiceNames)
		}
	}
	if s.Replicas > 1 {
		for _, pc := range cs {
			for _, v := range sortedKeys(pc.c.Mounts) {
				if vol := a.Spec.Volumes[v]; vol != nil && vol.Shared != nil && (vol.Shared.AccessMode == "ReadWriteOnce" || vol.Shared.AccessMode == "ReadWriteOncePod") {
					c.warnf(sub(pc.path+".mounts", v), "volume %q is %s but service %q has %d replicas: pods on other nodes (ReadWriteOncePod: any other pod) cannot mount it and stay Pending; use ReadWriteMany or one replica", v, vol.Shared.AccessMode, name, s.Replicas)
				}
			}
		}
	}
}

// job checks a job: its pod as a service's, the schedule and time zone as
// the API server and the CronJob controller read them, names that cannot
// clash with a service's selector.
func (c *checker) job(a *App, name string, j *Job) {
	path := "spec.jobs." + name
	if len(j.Sidecars) > 0 {
		c.sidecarGate(a, path+".sidecars")
	}
	c.pod(a, path, podContainers(path, j.Init, j.Sidecars, j.Containers), j.Pod)
	if j.SHM != nil {
		c.quantity(path+".shm", *j.SHM, true)
	}
	if _, clash := a.Spec.Services[name]; clash {
		c.errorf(path, "job %q has the name of service %q: the service's selector (app.kubernetes.io/name: %s) would match the job's pods, and its Service would send them traffic; rename one", name, name, name)
	}
	if _, clash := a.Spec.Training[name]; clash {
		c.errorf(path, "job %q has the name of training job %q; rename one", name, name)
	}
	if j.TTLAfterFinished != "" && a.Kube.Less(kubeJobTTL) {
		c.errorf(path+".ttlAfterFinished", "ttlSecondsAfterFinished is on by default from Kubernetes %s; target.kubernetes is %s", kubeJobTTL, a.Kube)
	}
	if j.Schedule == "" {
		for _, f := range []struct{ key, v string }{{"timeZone", j.TimeZone}, {"concurrency", j.Concurrency}} {
			if f.v != "" {
				c.errorf(path+"."+f.key, "%s is for a scheduled job, and job %q has no schedule (it runs once, as a Job); add a schedule or remove %s", f.key, name, f.key)
			}
		}
		return
	}
	if a.Kube.Less(kubeCronJobV1) {
		c.errorf(path+".schedule", "a scheduled job compiles to a batch/v1 CronJob, served from Kubernetes %s; target.kubernetes is %s", kubeCronJobV1, a.Kube)
	}
	if len(name) > maxCronJobName {
		c.errorf(path, "job key %q is %d characters: a scheduled job's CronJob names each run <name>-<minutes since 1970> and its name may have at most %d characters; shorten the key", name, len(name), maxCronJobName)
	}
	if strings.Contains(j.Schedule, "TZ=") {
		c.errorf(path+".schedule", "schedule %q sets a time zone with TZ= or CRON_TZ=, which the API server refuses; set timeZone instead", j.Schedule)
	} else if _, err := cron.ParseStandard(j.Schedule); err != nil {
		c.errorf(path+".schedule", "schedule %q is not a cron schedule (%v); write five fields, minute hour day-of-month month day-of-week, e.g. \"0 3 * * *\" for 03:00 daily, or @daily, @hourly", j.Schedule, err)
	}
	if tz := j.TimeZone; tz != "" {
		if a.Kube.Less(kubeCronJobTimeZone) {
			c.errorf(path+".timeZone", "CronJob timeZone is on by default from Kubernetes %s; target.kubernetes is %s", kubeCronJobTimeZone, a.Kube)
		}
		if _, err := time.LoadLocation(tz); err != nil || strings.EqualFold(tz, "Local") {
			c.errorf(path+".timeZone", "timeZone %q is not an IANA time zone name; use one such as Europe/Berlin, America/New_York or UTC", tz)
		}
	}
}

// scaling checks autoscale and disruption: an HPA that can compute its
// targets and owns the replica count, a budget that allows an eviction.
func (c *checker) scaling(path string, s *Service, cs []podContainer) {
	if as := s.Autoscale; as != nil {
		ap := path + ".autoscale"
		if c.spec.Lookup(path+".replicas") != nil {
			c.errorf(path+".replicas", "replicas and autoscale are both set: the HorizontalPodAutoscaler owns the replica count (kiln leaves replicas out of the Deployment so that a sync does not reset it); remove replicas and set autoscale.min")
		}
		if as.Min > as.Max {
			c.errorf(ap+".min", "autoscale.min %d is above autoscale.max %d; min is the fewest replicas, max the most", as.Min, as.Max)
		}
		if as.CPU == nil && as.Memory == nil {
			c.errorf(ap, "autoscale needs a target: cpu or memory, a percent of the containers' requests (e.g. cpu: 70)")
		}
		for _, m := range []struct {
			name   string
			target *int
		}{{"cpu", as.CPU}, {"memory", as.Memory}} {
			if m.target == nil {
				continue
			}
			for _, pc := range cs {
				if strings.Contains(pc.path, ".init[") {
					continue // init containers have ended when the HPA measures
				}
				if r := pc.c.Resources; r == nil || (m.name == "cpu" && r.CPU == "") || (m.name == "memory" && r.Memory == "") {
					c.errorf(ap+"."+m.name, "autoscale.%s is a percent of the %s request, and container %q requests none: the HPA cannot compute utilisation and never scales (FailedGetResourceMetric); set resources.%s on %s", m.name, m.name, pc.c.Name, m.name, pc.path)
					break
				}
			}
		}
	}
	d := s.Disruption
	if d == nil {
		return
	}
	dp := path + ".disruption"
	if (d.MinAvailable == nil) == (d.MaxUnavailable == nil) {
		c.errorf(dp, "disruption needs exactly one of minAvailable or maxUnavailable (a PodDisruptionBudget takes one)")
		return
	}
	for _, v := range []*IntOrPercent{d.MinAvailable, d.MaxUnavailable} {
		if v != nil && v.Percent && v.N > 100 {
			c.errorf(dp, "disruption %s is more than 100%%", v)
			return
		}
	}
	n := floorReplicas(s)
	if budgetAllows(d, n) > 0 {
		return
	}
	of := fmt.Sprintf("replicas is %d", n)
	if s.Autoscale != nil {
		of = fmt.Sprintf("autoscale.min is %d", n)
	}
	if d.MinAvailable != nil {
		c.errorf(dp+".minAvailable", "disruption.minAvailable %s never allows an eviction: %s, so every pod must stay up and a node drain (kubectl drain, a cluster upgrade) waits forever; keep minAvailable below the replica count (at most %d), or use maxUnavailable: 1", d.MinAvailable, of, max(n-1, 0))
		return
	}
	c.errorf(dp+".maxUnavailable", "disruption.maxUnavailable %s never allows an eviction (%s), so a node drain (kubectl drain, a cluster upgrade) waits forever; use at least 1", d.MaxUnavailable, of)
}

func (c *checker) sidecarGate(a *App, field string) {
	if a.Kube.Less(kubeNativeSidecars) {
		c.errorf(field, "sidecars compile to native sidecars (initContainers with restartPolicy: Always), on by default only from Kubernetes %s; target.kubernetes is %s: raise the target, or run the helper in containers", kubeNativeSidecars, a.Kube)
	}
}

func podContainers(path string, init, sidecars, containers []*Container) []podContainer {
	var out []podContainer
	for i, x := range init {
		out = append(out, podContainer{path: fmt.Sprintf("%s.init[%d]", path, i), c: x})
	}
	for i, x := range sidecars {
		out = append(out, podContainer{path: fmt.Sprintf("%s.sidecars[%d]", path, i), c: x, sidecar: true})
	}
	for i, x := range containers {
		out = append(out, podContainer{path: fmt.Sprintf("%s.containers[%d]", path, i), c: x})
	}
	return out
}

// pod checks one pod: unique container names, known volumes, configs and
// their keys, probes naming the container's own ports, memory units, the
// pod block; and warns about containers without a user id.
func (c *checker) pod(a *App, path string, cs []podContainer, pod *Pod) {
	seen := map[string]string{}
	podUser := false
	if s := podSecurityOf(a, path); s != nil && s.RunAsUser != nil {
		podUser = true
	}
	for _, pc := range cs {
		if prev, dup := seen[pc.c.Name]; dup {
			c.errorf(pc.path+".name", "container name %q is already used by %s; names must be unique across init, sidecars and containers of a pod", pc.c.Name, prev)
		} else {
			seen[pc.c.Name] = pc.path
		}
		c.mounts(a, pc.path, pc.c)
		c.env(a, pc.path, pc.c.Env)
		c.envFrom(a, pc.path, pc.c.EnvFrom)
		c.resources(pc.path+".resources", pc.c.Resources)
		for _, p := range []struct {
			key string
			p   *Probe
		}{{"startup", pc.c.Startup}, {"ready", pc.c.Ready}, {"live", pc.c.Live}} {
			if p.p != nil {
				c.probe(a, pc, pc.path+"."+p.key, p.p)
			}
		}
		if !podUser && (pc.c.Security == nil || pc.c.Security.RunAsUser == nil) {
			at := pc.path
			if pc.path == path {
				at = path + ".image"
			}
			c.warnf(at, "container %q sets no runAsUser; kiln sets runAsNonRoot, so the kubelet refuses to start it if the image's USER is root or unset; set security.runAsUser (pod or container) to a non-zero uid", pc.c.Name)
		}
	}
	if pod != nil {
		pp := path + ".pod"
		c.labels(pp+".labels", pod.Labels)
		c.annotations(pp+".annotations", pod.Annotations)
		c.labels(pp+".nodeSelector", pod.NodeSelector)
		for _, k := range sortedKeys(pod.Labels) {
			if k == LabelName || k == LabelPartOf || k == LabelManagedBy {
				c.errorf(sub(pp+".labels", k), "label %s is set by kiln (selectors use it); remove it", k)
			}
		}
		if _, ok := pod.Annotations[ConfigHashAnnotation]; ok {
			c.errorf(sub(pp+".annotations", ConfigHashAnnotation), "annotation %s is set by kiln (a hash of the configs the pods read); remove it", ConfigHashAnnotation)
		}
		c.tolerations(pp+".tolerations", pod.Tolerations)
		if len(pod.Affinity) > 0 {
			d := json.NewDecoder(bytes.NewReader(pod.Affinity))
			d.DisallowUnknownFields()
			var aff corev1.Affinity
			if err := d.Decode(&aff); err != nil {
				c.errorf(pp+".affinity", "affinity is not a Kubernetes Affinity: %s", strings.TrimPrefix(err.Error(), "json: "))
			}
		}
	}
}

// tolerations checks tolerations as the API server does.
func (c *checker) tolerations(path string, ts []*Toleration) {
	for i, t := range ts {
		tp := fmt.Sprintf("%s[%d]", path, i)
		if t.Operator == "Exists" && t.Value != "" {
			c.errorf(tp+".value", "a toleration with operator Exists matches any value; remove value, or use operator Equal")
		}
		if t.Key == "" && t.Operator != "Exists" {
			c.errorf(tp, "a toleration without key must have operator: Exists (it then tolerates every taint)")
		}
		if t.TolerationSeconds != nil && t.Effect != "NoExecute" {
			c.errorf(tp+".tolerationSeconds", "tolerationSeconds applies only to effect NoExecute")
		}
	}
}

// podSecurityOf returns the pod-level security of the service or training job at path.
func podSecurityOf(a *App, path string) *PodSecurity {
	if k, ok := strings.CutPrefix(path, "spec.services."); ok {
		if s := a.Spec.Services[k]; s != nil {
			return s.Security
		}
	}
	if k, ok := strings.CutPrefix(path, "spec.jobs."); ok {
		if j := a.Spec.Jobs[k]; j != nil {
			return j.Security
		}
	}
	if k, ok := strings.CutPrefix(path, "spec.training."); ok {
		if t := a.Spec.Training[k]; t != nil {
			return t.Security
		}
	}
	return nil
}

// env checks that every config an env variable names exists in the spec
// with that key, and that a reference names exactly one of config or secret.
func (c *checker) env(a *App, path string, env map[string]EnvValue) {
	for _, k := range sortedKeys(env) {
		v := env[k]
		f := sub(path+".env", k)
		if v.Value == "" && !v.IsRef() && v.Key != "" {
			c.errorf(f, "env %s names a key but neither config nor secret; give {config: NAME, key: K} or {secret: NAME, key: K}", k)
			continue
		}
		if v.Config != "" && v.Secret != "" {
			c.errorf(f, "env %s names both a config and a secret; give one", k)
			continue
		}
		if v.Config != "" {
			c.configKey(a, f, v.Config, v.Key)
		}
	}
}

// envFrom checks that each envFrom names exactly one of a config of the
// spec or a Secret, and that every key of a config makes a valid env name
// with the prefix (the kubelet skips a key that does not, with only an event).
func (c *checker) envFrom(a *App, path string, refs []*EnvFrom) {
	for i, r := range refs {
		f := fmt.Sprintf("%s.envFrom[%d]", path, i)
		if (r.Config == "") == (r.Secret == "") {
			c.errorf(f, "envFrom needs exactly one of config or secret: {config: NAME} takes every key of a config of the spec, {secret: NAME} of an existing Secret")
			continue
		}
		if r.Config == "" {
			continue
		}
		c.configKey(a, f, r.Config, "")
		cfg := a.Spec.Configs[r.Config]
		if cfg == nil {
			continue
		}
		for _, k := range configKeys(cfg) {
			if !envName.MatchString(r.Prefix + k) {
				c.errorf(f, "envFrom config %q: key %q does not make an env variable name (%q starts with a digit), so the kubelet would skip it; give a prefix, e.g. prefix: APP_", r.Config, k, r.Prefix+k)
				break
			}
		}
	}
}

// envName is an env variable name the API server accepts (IsEnvVarName).
var envName = regexp.MustCompile(`^[-._a-zA-Z][-._a-zA-Z0-9]*$`)

// configKey checks that config name exists in spec.configs and, when key is
// given, holds it.
func (c *checker) configKey(a *App, field, name, key string) {
	cfg, ok := a.Spec.Configs[name]
	if !ok {
		known := sortedKeys(a.Spec.Configs)
		hint := "spec.configs declares none"
		if len(known) > 0 {
			hint = "known configs: " + strings.Join(known, ", ")
			if near := nearest(name, known); near != "" {
				hint = fmt.Sprintf("did you mean %q? %s", near, hint)
			}
		}
		c.errorf(field+".config", "config %q is not in spec.configs; %s (an existing ConfigMap is not supported: declare it under spec.configs)", name, hint)
		return
	}
	if key == "" {
		return
	}
	keys := configKeys(cfg)
	for _, k := range keys {
		if k == key {
			return
		}
	}
	hint := "it has no keys"
	if len(keys) > 0 {
		hint = "its keys: " + strings.Join(keys, ", ")
	}
	c.errorf(field+".key", "config %q has no key %q; %s", name, key, hint)
}

// mounts checks a container's mounts and files: known volumes and configs,
// one thing per path.
func (c *checker) mounts(a *App, path string, ctr *Container) {
	at := map[string]string{}
	claim := func(field, mp, what string) {
		mp = strings.TrimRight(mp, "/")
		if prev, dup := at[mp]; dup {
			c.errorf(field, "%s and %s are both mounted at %s; give each its own path", prev, what, mp)
			return
		}
		at[mp] = what
	}
	for _, vol := range sortedKeys(ctr.Mounts) {
		field := sub(path+".mounts", vol)
		if _, ok := a.Spec.Volumes[vol]; !ok {
			known := sortedKeys(a.Spec.Volumes)
			hint := "spec.volumes declares none"
			if len(known) > 0 {
				hint = "known volumes: " + strings.Join(known, ", ")
			}
			c.errorf(field, "mounts names volume %q, which spec.volumes does not declare; %s", vol, hint)
		}
		claim(field, ctr.Mounts[vol], fmt.Sprintf("volume %q", vol))
	}
	for _, fp := range sortedKeys(ctr.Files) {
		ref := ctr.Files[fp]
		field := sub(path+".files", fp)
		switch {
		case ref.Config != "" && ref.Secret != "", ref.Config == "" && ref.Secret == "":
			c.errorf(field, "files %s must name exactly one of config or secret", fp)
			continue
		case ref.Config != "":
			c.configKey(a, field, ref.Config, ref.Key)
		}
		if strings.TrimRight(fp, "/") == "" {
			c.errorf(field, "files cannot mount over /")
		}
		claim(field, fp, "files "+fp)
	}
}

func (c *checker) probe(a *App, pc podContainer, path string, p *Probe) {
	n := 0
	for _, set := range []bool{p.HTTPGet != nil, p.TCPSocket != nil, p.Exec != nil, p.GRPC != nil} {
		if set {
			n++
		}
	}
	if n != 1 {
		c.errorf(path, "a probe needs exactly one of httpGet, tcpSocket, exec or grpc; it sets %d", n)
	}
	if p.GRPC != nil && a.Kube.Less(kubeGRPCProbe) {
		c.errorf(path+".grpc", "grpc probes are on by default from Kubernetes %s; target.kubernetes is %s", kubeGRPCProbe, a.Kube)
	}
	var port Port
	field := ""
	switch {
	case p.HTTPGet != nil:
		port, field = p.HTTPGet.Port, path+".httpGet.port"
	case p.TCPSocket != nil:
		port, field = p.TCPSocket.Port, path+".tcpSocket.port"
	}
	if port.Name == "" {
		return
	}
	own := map[string]bool{}
	for k := range pc.c.Ports {
		own[k] = true
	}
	for k := range pc.ports {
		own[k] = true
	}
	if !own[port.Name] {
		hint := "it declares no ports"
		if len(own) > 0 {
			hint = "its ports: " + strings.Join(sortedKeys(own), ", ")
		}
		c.errorf(field, "probe port %q is not a port of container %q; the kubelet looks port names up only in the probing container, so the probe would never pass: use a port number or one of the container's own port names (%s)", port.Name, pc.c.Name, hint)
	}
}

// nearest returns the candidate closest to s by edit distance, if close.
func nearest(s string, candidates []string) string {
	best, bestD := "", 3
	for _, c := range candidates {
		if d := editdist.Distance(s, c); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

func (c *checker) training(a *App, name string, t *Training) {
	path := "spec.training." + name
	if a.Kube.Less(kubeIndexedJob) {
		c.errorf(path, "training compiles to Indexed Jobs, on by default from Kubernetes %s; target.kubernetes is %s", kubeIndexedJob, a.Kube)
	}
	if a.JobSet.Less(jobSetV1alpha2) {
		c.errorf("spec.target.jobset", "kiln emits jobset.x-k8s.io/v1alpha2, served from JobSet %s; target.jobset is %s", jobSetV1alpha2, a.JobSet)
	}
	if t.RestartStrategy != "" && a.JobSet.Less(jobSetRestartStrategy) {
		c.errorf(path+".restartStrategy", "failurePolicy.restartStrategy is a field JobSet %s added; target.jobset is %s: raise it or drop restartStrategy", jobSetRestartStrategy, a.JobSet)
	}
	if t.TTLAfterFinished != "" && a.JobSet.Less(jobSetTTL) {
		c.errorf(path+".ttlAfterFinished", "ttlSecondsAfterFinished is a field JobSet %s added; target.jobset is %s", jobSetTTL, a.JobSet)
	}
	if len(t.Sidecars) > 0 {
		c.sidecarGate(a, path+".sidecars")
	}
	if t.ParameterServers > 0 && t.Framework != "tensorflow" {
		c.errorf(path+".parameterServers", "parameterServers is for framework tensorflow; framework %s has no parameter servers", t.Framework)
	}
	for _, role := range sortedKeys(t.Roles) {
		switch {
		case t.Framework != "tensorflow":
			c.errorf(path+".roles", "roles is for framework tensorflow (chief and parameter servers); framework %s has only workers: use resources", t.Framework)
		case role == psJob && t.ParameterServers == 0, role == chiefJob && !hasChief(t):
			c.errorf(path+".roles."+role, "roles.%s sets resources of a role this job does not have (a chief and parameter servers come with parameterServers > 0)", role)
		}
	}
	n := t.Nodes
	if n.Elastic {
		switch {
		case t.Framework != "pytorch":
			c.errorf(path+".nodes", "nodes %q: MIN:MAX (elastic training) is for framework pytorch; give a number", fmt.Sprintf("%d:%d", n.Min, n.Max))
		case n.Min < 1 || n.Max > 100000 || n.Min > n.Max:
			c.errorf(path+".nodes", "nodes %q: want MIN:MAX with 1 <= MIN <= MAX <= 100000", fmt.Sprintf("%d:%d", n.Min, n.Max))
		}
	}
	if t.Framework == "pytorch" && len(t.Command) > 0 {
		if launched, err := torchLaunch(t.Command); err != nil {
			c.errorf(path+".command", "%v", err)
		} else if !startsTorchrun(append(launched, t.Args...)) && (t.Nodes.Max > 1 || t.GPUsPerNode > 1) {
			c.warnf(path+".command", "command %s does not start torchrun: kiln configures torchrun through PET_* variables (%s), which only torchrun reads, so %s; %s",
				listOf(t.Command), petSummary(t), untorched(t), torchrunHint(t.Command))
		}
	}
	main := &Container{Name: mainContainer, Image: t.Image, Mounts: t.Mounts, Env: t.Env, EnvFrom: t.EnvFrom, Files: t.Files, Resources: t.Resources}
	for _, role := range sortedKeys(t.Roles) {
		if r := t.Roles[role]; r != nil && r.Resources != nil {
			c.resources(path+".roles."+role+".resources", r.Resources)
		}
	}
	c.quantity(path+".shm", t.SHM, true)
	cs := podContainers(path, t.Init, t.Sidecars, nil)
	cs = append(cs, podContainer{path: path, c: main, ports: map[string]bool{frameworkPort(t.Framework): true}})
	c.pod(a, path, cs, t.Pod)
	reserved := frameworkEnv(t.Framework)
	for _, k := range sortedKeys(t.Env) {
		if reserved[k] {
			c.errorf(sub(path+".env", k), "env %s is set by kiln for framework %s; remove it", k, t.Framework)
		}
	}
	c.trainingNames(a, name, t)
	if t.Framework == "tensorflow" {
		for _, rj := range roleJobs(name, t) {
			if size := tfConfigBytes(name, t, rj.name, rj.pods); size > maxEnvBytes {
				c.errorf(path+".nodes", "TF_CONFIG of the %s pods would be %d bytes with %d workers and %d parameter servers; Linux refuses to start a process with an environment variable over %d bytes (MAX_ARG_STRLEN): use at most %d workers, or a cluster resolver that does not list every task", rj.name, size, t.Nodes.Max, t.ParameterServers, maxEnvBytes, maxTFWorkers(name, t))
				break
			}
		}
	}
}

// maxTFWorkers is the most workers whose TF_CONFIG fits in maxEnvBytes.
func maxTFWorkers(name string, t *Training) int {
	fits := func(nodes int) bool {
		u := *t
		u.Nodes = Nodes{nodes, nodes, false}
		for _, rj := range roleJobs(name, &u) {
			if tfConfigBytes(name, &u, rj.name, rj.pods) > maxEnvBytes {
				return false
			}
		}
		return true
	}
	lo, hi := 0, t.Nodes.Max
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if fits(mid) {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}

// frameworkPort is the name of the container port kiln gives a framework's main container.
func frameworkPort(framework string) string {
	switch framework {
	case "pytorch":
		return "torchrun"
	case "tensorflow":
		return "tf-server"
	}
	return "coordinator"
}

// trainingNames applies the JobSet webhook's name rules (kubernetes-sigs/jobset
// pkg/webhooks/jobset_webhook.go, ValidateCreate) to the names a training
// key produces: each Job name <jobset>-<replicatedJob>-<jobIndex> must be a
// DNS-1035 label (a letter first), and the longest pod name
// <jobset>-<replicatedJob>-<jobIndex>-<podIndex> plus the 5-character
// suffix must be one too (at most 57 characters before the suffix). The
// JobSet's headless Service is named after the JobSet, which the same rule
// covers.
func (c *checker) trainingNames(a *App, name string, t *Training) {
	path := "spec.training." + name
	for _, rj := range roleJobs(name, t) {
		job := name + "-" + rj.name + "-0"
		if errs := validation.IsDNS1035Label(job); len(errs) > 0 && !strings.Contains(strings.Join(errs, " "), "no more than") {
			c.errorf(path, "training key %q cannot name a JobSet: the JobSet webhook requires its Job names (%q) to be DNS-1035 labels, which start with a letter; rename it, e.g. %q", name, job, "job-"+name)
			return
		}
	}
	max, worst := maxJobSetPodName, ""
	for _, rj := range roleJobs(name, t) {
		pod := hostname(name, rj.name, rj.pods-1)
		if len(pod) > maxJobSetPodName {
			if m := len(name) - (len(pod) - maxJobSetPodName); m < max || worst == "" {
				max, worst = m, pod
			}
		}
	}
	if worst != "" {
		c.errorf(path, "training key %q is too long: the JobSet webhook requires pod names %q plus a 5-character suffix to fit in 63 characters (at most %d before the suffix), and %q has %d; shorten the key to at most %d characters", name, "<jobset>-<job>-<jobIndex>-<podIndex>", maxJobSetPodName, worst, len(worst), max)
	}
}

// hostname is the stable hostname of pod podIndex of job 0 of a replicated job.
func hostname(jobset, rjob string, podIndex int) string {
	return fmt.Sprintf("%s-%s-0-%d", jobset, rjob, podIndex)
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
