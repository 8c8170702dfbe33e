package compiler

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/kilnhq/kiln/manifest"
)

// Versions that gate what kiln emits.
var (
	// LatestJobSet is the newest JobSet release kiln knows: the default target.jobset.
	LatestJobSet = JobSetVersion{0, 10}
	// jobSetV1alpha2 is the first release serving jobset.x-k8s.io/v1alpha2.
	jobSetV1alpha2 = JobSetVersion{0, 2}
	// jobSetCoordinator is the first release with spec.coordinator
	// (kubernetes-sigs/jobset#617, milestone release-0.6).
	jobSetCoordinator = JobSetVersion{0, 6}

	kubeSeccompField   = manifest.KubeVersion{Major: 1, Minor: 19}
	kubeIndexedJob     = manifest.KubeVersion{Major: 1, Minor: 22}
	kubePodSecurity    = manifest.KubeVersion{Major: 1, Minor: 23}
	kubeGRPCProbe      = manifest.KubeVersion{Major: 1, Minor: 24}
	kubeNativeSidecars = manifest.KubeVersion{Major: 1, Minor: 29}
)

// maxHostname is the longest DNS label, hence the longest pod hostname and label value.
const maxHostname = 63

// Names kiln gives to what it adds.
const (
	tmpVolume     = "tmp"
	mainContainer = "trainer"
	workerJob     = "worker"
	psJob         = "ps"
)

// checker collects positioned errors for one spec.
type checker struct {
	spec *manifest.Object
	errs []error
}

func (c *checker) errorf(field, format string, args ...any) {
	c.errs = append(c.errs, &manifest.Error{Pos: c.spec.Locate(field), Msg: fmt.Sprintf(format, args...)})
}

// validate checks what the CUE schema cannot express well and parses the targets.
func validate(spec *manifest.Object, a *App) []error {
	c := &checker{spec: spec}
	c.targets(a)
	s := &a.Spec
	if s.Namespace != nil {
		if a.Metadata.Namespace == "" {
			c.errorf("spec.namespace", "spec.namespace asks for a Namespace object, but metadata.namespace is not set; name the namespace there")
		}
		if s.Namespace.Security != nil && a.Kube.Less(kubePodSecurity) {
			c.errorf("spec.namespace.security", "Pod Security Admission labels need Kubernetes %s or newer (on by default from 1.23); target.kubernetes is %s", kubePodSecurity, a.Kube)
		}
	}
	for _, name := range sortedKeys(s.Volumes) {
		c.volume(name, s.Volumes[name])
	}
	for _, name := range sortedKeys(s.Services) {
		c.service(a, name, s.Services[name])
	}
	for _, name := range sortedKeys(s.Training) {
		c.training(a, name, s.Training[name])
	}
	return c.errs
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
	if name == tmpVolume {
		c.errorf(path, "volume name %q is reserved: kiln mounts a writable emptyDir named %q at /tmp in every container; pick another name", name, tmpVolume)
	}
}

// podContainer is one container of a pod being checked: its spec path and fields.
type podContainer struct {
	path    string
	c       *Container
	sidecar bool
}

func (c *checker) service(a *App, name string, s *Service) {
	path := "spec.services." + name
	if len(s.Sidecars) > 0 {
		c.sidecarGate(a, path+".sidecars")
	}
	c.pod(a, path, podContainers(path, s.Init, s.Sidecars, s.Containers))
	if _, clash := a.Spec.Training[name]; clash {
		c.errorf(path, "service %q has the name of training job %q, whose JobSet gets a headless Service of that name; rename one", name, name)
	}
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

// pod checks the containers of one pod: unique names, known volumes, probes.
func (c *checker) pod(a *App, path string, cs []podContainer) {
	seen := map[string]string{}
	for _, pc := range cs {
		if prev, dup := seen[pc.c.Name]; dup {
			c.errorf(pc.path+".name", "container name %q is already used by %s; names must be unique across init, sidecars and containers of a pod", pc.c.Name, prev)
		} else {
			seen[pc.c.Name] = pc.path
		}
		c.mounts(a, pc.path, pc.c.Mounts)
		for _, p := range []struct {
			key string
			p   *Probe
		}{{"startup", pc.c.Startup}, {"ready", pc.c.Ready}, {"live", pc.c.Live}} {
			if p.p != nil {
				c.probe(a, pc.path+"."+p.key, p.p)
			}
		}
	}
}

func (c *checker) mounts(a *App, path string, mounts map[string]string) {
	at := map[string]string{}
	for _, vol := range sortedKeys(mounts) {
		field := path + ".mounts." + vol
		if _, ok := a.Spec.Volumes[vol]; !ok {
			known := sortedKeys(a.Spec.Volumes)
			hint := "spec.volumes declares none"
			if len(known) > 0 {
				hint = "known volumes: " + strings.Join(known, ", ")
			}
			c.errorf(field, "mounts names volume %q, which spec.volumes does not declare; %s", vol, hint)
		}
		mp := strings.TrimRight(mounts[vol], "/")
		if prev, dup := at[mp]; dup {
			c.errorf(field, "volumes %q and %q are both mounted at %s; give each its own path", prev, vol, mounts[vol])
		}
		at[mp] = vol
	}
}

func (c *checker) probe(a *App, path string, p *Probe) {
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
}

func (c *checker) training(a *App, name string, t *Training) {
	path := "spec.training." + name
	if a.Kube.Less(kubeIndexedJob) {
		c.errorf(path, "training compiles to Indexed Jobs, on by default from Kubernetes %s; target.kubernetes is %s", kubeIndexedJob, a.Kube)
	}
	if a.JobSet.Less(jobSetV1alpha2) {
		c.errorf("spec.target.jobset", "kiln emits jobset.x-k8s.io/v1alpha2, served from JobSet %s; target.jobset is %s", jobSetV1alpha2, a.JobSet)
	} else if hasCoordinator(t) && a.JobSet.Less(jobSetCoordinator) {
		c.errorf("spec.target.jobset", "framework %s sets the JobSet's spec.coordinator, a field JobSet %s added; target.jobset %s does not know it: target %s or newer", t.Framework, jobSetCoordinator, a.JobSet, jobSetCoordinator)
	}
	if len(t.Sidecars) > 0 {
		c.sidecarGate(a, path+".sidecars")
	}
	if t.ParameterServers > 0 && t.Framework != "tensorflow" {
		c.errorf(path+".parameterServers", "parameterServers is for framework tensorflow; framework %s has no parameter servers", t.Framework)
	}
	if t.Framework == "pytorch" && len(t.Command) > 0 && t.Command[0] == "torchrun" {
		c.errorf(path+".command", "kiln writes the torchrun launch itself (--nnodes, --nproc_per_node, --node_rank, --master_addr, --master_port); give the script or module, e.g. [python, -m, train]")
	}
	main := &Container{Name: mainContainer, Image: t.Image, Mounts: t.Mounts, Env: t.Env}
	cs := podContainers(path, t.Init, t.Sidecars, nil)
	cs = append(cs, podContainer{path: path, c: main})
	c.pod(a, path, cs)
	reserved := frameworkEnv(t.Framework)
	for _, k := range sortedKeys(t.Env) {
		if reserved[k] {
			c.errorf(path+".env."+k, "env %s is set by kiln for framework %s; remove it", k, t.Framework)
		}
	}
	// Pod hostnames are <jobset>-<replicatedJob>-<jobIndex>-<podIndex>; each
	// is a DNS label, so at most 63 characters.
	jobs := []struct {
		name string
		pods int
	}{{workerJob, t.Nodes}}
	if t.ParameterServers > 0 {
		jobs = append(jobs, struct {
			name string
			pods int
		}{psJob, t.ParameterServers})
	}
	long := false
	for _, j := range jobs {
		host := hostname(name, j.name, j.pods-1)
		if len(host) > maxHostname && !long {
			long = true
			c.errorf(path, "JobSet name %q is too long: pod hostname %q has %d characters, more than %d; shorten the key under spec.training to at most %d characters", name, host, len(host), maxHostname, len(name)-(len(host)-maxHostname))
		}
	}
	if hasCoordinator(t) && !long {
		ep := hostname(name, workerJob, 0) + "." + name
		if len(ep) > maxHostname {
			c.errorf(path, "JobSet name %q is too long: the coordinator endpoint %q (a label value JobSet sets on every pod) has %d characters, more than %d; shorten the key under spec.training", name, ep, len(ep), maxHostname)
		}
	}
}

// hasCoordinator reports whether a training job gets a JobSet coordinator.
func hasCoordinator(t *Training) bool { return t.Framework != "tensorflow" }

// hostname is the stable hostname of pod podIndex of job 0 of a replicated job.
func hostname(jobset, rjob string, podIndex int) string {
	return fmt.Sprintf("%s-%s-0-%d", jobset, rjob, podIndex)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
