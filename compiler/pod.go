package compiler

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"sort"
	"strconv"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// GPUResource is the extended resource GPUs are requested as.
const GPUResource = "nvidia.com/gpu"

// ctrSource is one container to emit: the spec container and where it is in
// the spec, plus what the emitter of its family adds.
type ctrSource struct {
	path    string
	c       *Container
	sidecar bool

	command, args []string     // replace c.Command and c.Args when set
	env           []*yaml.Node // kiln's env entries, before the spec's
	ports         []portSource // ports added by the family (service ports, coordinator port)
	gpus          int
	resources     *Resources // used when c.Resources is nil
	resPath       string
}

// portSource is a container port and where it comes from in the spec.
type portSource struct {
	name   string
	number int
	at     pos
}

// podSource is one pod template to emit.
type podSource struct {
	path          string
	init          []ctrSource
	containers    []ctrSource
	security      *PodSecurity
	restartPolicy string
	pod           *Pod              // the spec's pod block (may be nil)
	spread        map[string]string // labels that select this template's pods (topologySpread)
	shm           *Quantity         // mount a memory-backed /dev/shm in the containers, with this size limit ("" unsized)
	configs       []string          // configs whose content hash goes into the template's annotations (ConfigHashAnnotation)
}

// podVolumes are the volumes the containers of one pod use.
type podVolumes struct {
	spec map[string]bool    // spec volumes by name
	refs map[string]FileRef // config and Secret volumes by pod volume name
	tmp  bool               // kiln's /tmp emptyDir
	shm  *Quantity          // kiln's /dev/shm emptyDir
}

// sub appends a key to a field path, quoting it when it has dots.
func sub(path, key string) string {
	if strings.ContainsAny(key, `.[]"`) {
		return path + `["` + key + `"]`
	}
	return path + "." + key
}

func indexed(path, key string, cs []*Container, sidecar bool) []ctrSource {
	out := make([]ctrSource, len(cs))
	for i, c := range cs {
		out[i] = ctrSource{path: path + "." + key + "[" + itoa(i) + "]", c: c, sidecar: sidecar}
	}
	return out
}

// podTemplate emits a pod template: standard labels, the restricted
// securityContext, init containers then sidecars (restartPolicy: Always) as
// initContainers, the containers, and the volumes they mount plus a writable
// emptyDir at /tmp.
func (e *emitter) podTemplate(name string, ps podSource) *yaml.Node {
	t := &podEmit{podSource: ps, at: e.at(ps.path)}
	if ps.pod != nil {
		t.block = *ps.pod
	}
	spec := e.podSpec(t)
	return mapping(t.at,
		field{"metadata", e.podMetadata(name, t)},
		field{"spec", spec},
	)
}

// podEmit is a pod template being emitted: its source, where it is in the
// spec, and the spec's pod block.
type podEmit struct {
	podSource
	block Pod // the spec's pod block (podSource.pod), empty when the spec has none
	at    pos // the template's source
}

// podField is the field path of a field of the spec's pod block.
func (t *podEmit) podField(name string) string { return t.path + ".pod." + name }

// podSpec emits the template's spec: the pod's settings and scheduling,
// its securityContext, the containers and the volumes they mount.
func (e *emitter) podSpec(t *podEmit) *yaml.Node {
	vols := &podVolumes{spec: map[string]bool{}, refs: map[string]FileRef{}}
	var inits, ctrs []*yaml.Node
	for _, cs := range t.init {
		inits = append(inits, e.container(cs, vols, nil))
	}
	for _, cs := range t.containers {
		ctrs = append(ctrs, e.container(cs, vols, t.shm))
	}
	spec := mapping(t.at)
	e.addPodSettings(spec, t)
	e.addScheduling(spec, t)
	add(spec, field{"securityContext", e.podSecurity(t.path, t.security)})
	if len(inits) > 0 {
		add(spec, field{"initContainers", seq(t.at, inits...)})
	}
	add(spec,
		field{"containers", seq(t.at, ctrs...)},
		field{"volumes", e.podVolumes(t.at, e.at(t.path+".shm"), vols)},
	)
	return spec
}

// addPodSettings adds the restart policy, termination grace period,
// service account, priority class and image pull secrets the spec sets.
func (e *emitter) addPodSettings(spec *yaml.Node, t *podEmit) {
	pod := &t.block
	if t.restartPolicy != "" {
		add(spec, field{"restartPolicy", str(t.at, t.restartPolicy)})
	}
	if pod.TerminationGracePeriod != "" {
		add(spec, field{"terminationGracePeriodSeconds", num(e.at(t.podField("terminationGracePeriod")), durationSeconds(pod.TerminationGracePeriod))})
	}
	if pod.ServiceAccount != "" {
		add(spec, field{"serviceAccountName", str(e.at(t.podField("serviceAccount")), pod.ServiceAccount)})
	}
	if pod.PriorityClass != "" {
		add(spec, field{"priorityClassName", str(e.at(t.podField("priorityClass")), pod.PriorityClass)})
	}
	if len(pod.ImagePullSecrets) > 0 {
		ip := e.at(t.podField("imagePullSecrets"))
		items := make([]*yaml.Node, len(pod.ImagePullSecrets))
		for i, s := range pod.ImagePullSecrets {
			items[i] = mapping(ip, field{"name", str(ip, s)})
		}
		add(spec, field{"imagePullSecrets", seq(ip, items...)})
	}
}

// addScheduling adds the nodeSelector, tolerations, affinity and
// topology spread constraints; a pod that requests GPUs gets the GPU
// pool's nodeSelector and tolerations first.
func (e *emitter) addScheduling(spec *yaml.Node, t *podEmit) {
	pod := &t.block
	nodeSelector, nsAt := pod.NodeSelector, e.at(t.podField("nodeSelector"))
	tolerations := e.tolerations(t.podField("tolerations"), pod.Tolerations)
	if pool := e.app.Spec.Target.GPUPool; pool != nil && t.requestsGPUs() {
		// The pool's scheduling first; the pod's own nodeSelector keys win.
		nodeSelector = map[string]string{}
		for k, v := range pool.NodeSelector {
			nodeSelector[k] = v
		}
		for k, v := range pod.NodeSelector {
			nodeSelector[k] = v
		}
		if len(pod.NodeSelector) == 0 {
			nsAt = e.at("spec.target.gpuPool.nodeSelector")
		}
		poolT := e.tolerations("spec.target.gpuPool.tolerations", pool.Tolerations)
		poolT.Content = append(poolT.Content, tolerations.Content...)
		tolerations = poolT
	}
	add(spec, field{"nodeSelector", stringMap(nsAt, nodeSelector)})
	if len(tolerations.Content) > 0 {
		add(spec, field{"tolerations", tolerations})
	}
	if len(pod.Affinity) > 0 {
		add(spec, field{"affinity", fromJSON(e.at(t.podField("affinity")), pod.Affinity)})
	}
	if len(pod.TopologySpread) > 0 {
		add(spec, field{"topologySpreadConstraints", e.topologySpread(t.podField("topologySpread"), pod.TopologySpread, t.spread)})
	}
}

// podMetadata emits the template's metadata: the pod's labels with the
// standard ones over them, and its annotations, with the hash of the
// configs it mounts (ConfigHashAnnotation) under the pod's own.
func (e *emitter) podMetadata(name string, t *podEmit) *yaml.Node {
	pod := &t.block
	labels := map[string]string{}
	for k, v := range pod.Labels {
		labels[k] = v
	}
	for k, v := range e.labels(name) {
		labels[k] = v
	}
	md := mapping(t.at, field{"labels", stringMap(t.at, labels)})
	annotations := pod.Annotations
	ap := e.at(t.podField("annotations"))
	if len(t.configs) > 0 {
		annotations = map[string]string{ConfigHashAnnotation: e.configHash(t.configs)}
		for k, v := range pod.Annotations {
			annotations[k] = v
		}
		if len(pod.Annotations) == 0 {
			ap = e.at("spec.configs." + t.configs[0])
		}
	}
	add(md, field{"annotations", stringMap(ap, annotations)})
	return md
}

// requestsGPUs reports whether a container of the pod requests GPUs.
func (ps podSource) requestsGPUs() bool {
	for _, list := range [][]ctrSource{ps.init, ps.containers} {
		for _, cs := range list {
			if cs.gpus > 0 || (cs.c.Resources != nil && cs.c.Resources.GPUs > 0) {
				return true
			}
		}
	}
	return false
}

// tolerations emits tolerations in spec order.
func (e *emitter) tolerations(path string, ts []*Toleration) *yaml.Node {
	out := seq(e.at(path))
	for i, t := range ts {
		tp := e.at(path + "[" + itoa(i) + "]")
		n := mapping(tp)
		if t.Key != "" {
			add(n, field{"key", str(tp, t.Key)})
		}
		if t.Operator != "" {
			add(n, field{"operator", str(tp, t.Operator)})
		}
		if t.Value != "" {
			add(n, field{"value", str(tp, t.Value)})
		}
		if t.Effect != "" {
			add(n, field{"effect", str(tp, t.Effect)})
		}
		if t.TolerationSeconds != nil {
			add(n, field{"tolerationSeconds", num(tp, int(*t.TolerationSeconds))})
		}
		out.Content = append(out.Content, n)
	}
	return out
}

// topologySpread emits spread constraints over the template's own pods.
func (e *emitter) topologySpread(path string, ts []*TopologySpread, selector map[string]string) *yaml.Node {
	out := seq(e.at(path))
	for i, t := range ts {
		tp := e.at(path + "[" + itoa(i) + "]")
		out.Content = append(out.Content, mapping(tp,
			field{"maxSkew", num(tp, t.MaxSkew)},
			field{"topologyKey", str(tp, t.TopologyKey)},
			field{"whenUnsatisfiable", str(tp, t.WhenUnsatisfiable)},
			field{"labelSelector", mapping(tp, field{"matchLabels", stringMap(tp, selector)})},
		))
	}
	return out
}

// durationSeconds converts a validated #Duration (30s, 5m, 2h) to seconds.
func durationSeconds(d string) int {
	n, _ := strconv.Atoi(d[:len(d)-1])
	switch d[len(d)-1] {
	case 'm':
		return n * 60
	case 'h':
		return n * 3600
	}
	return n
}

// podSecurity is the pod securityContext: runAsNonRoot and the
// RuntimeDefault seccomp profile unless the spec says otherwise.
func (e *emitter) podSecurity(path string, s *PodSecurity) *yaml.Node {
	p := e.at(path)
	if s == nil {
		s = &PodSecurity{}
	}
	sc := mapping(p)
	if s.FSGroup != nil {
		add(sc, field{"fsGroup", num(e.at(path+".security.fsGroup"), *s.FSGroup)})
	}
	if s.RunAsGroup != nil {
		add(sc, field{"runAsGroup", num(e.at(path+".security.runAsGroup"), *s.RunAsGroup)})
	}
	nonRoot := true
	np := p
	if s.RunAsNonRoot != nil {
		nonRoot, np = *s.RunAsNonRoot, e.at(path+".security.runAsNonRoot")
	}
	add(sc, field{"runAsNonRoot", boolean(np, nonRoot)})
	if s.RunAsUser != nil {
		add(sc, field{"runAsUser", num(e.at(path+".security.runAsUser"), *s.RunAsUser)})
	}
	add(sc, field{"seccompProfile", mapping(p, field{"type", str(p, "RuntimeDefault")})})
	return sc
}

// container emits one container and records the volumes it mounts in vols;
// shm, when set, asks for kiln's memory-backed /dev/shm.
func (e *emitter) container(cs ctrSource, vols *podVolumes, shm *Quantity) *yaml.Node {
	c := cs.c
	path := cs.path
	p := e.at(path)
	n := mapping(p,
		field{"name", str(e.at(path+".name"), c.Name)},
		field{"image", str(e.at(path+".image"), c.Image)},
	)
	e.addCommand(n, cs)
	e.addEnv(n, cs)
	e.addPorts(n, cs)
	resPath, res := path+".resources", c.Resources
	if res == nil && cs.resources != nil {
		resPath, res = cs.resPath, cs.resources
	}
	add(n, field{"resources", e.resources(resPath, res, cs.gpus)})
	if cs.sidecar {
		add(n, field{"restartPolicy", str(p, "Always")})
	}
	add(n,
		field{"startupProbe", e.probe(path+".startup", c.Startup)},
		field{"readinessProbe", e.probe(path+".ready", c.Ready)},
		field{"livenessProbe", e.probe(path+".live", c.Live)},
		field{"securityContext", e.containerSecurity(path, c.Security)},
	)
	if items := e.volumeMounts(cs, p, vols, shm); len(items) > 0 {
		add(n, field{"volumeMounts", seq(e.at(path+".mounts"), items...)})
	}
	return n
}

// addCommand adds the container's command and args: the family's when it
// sets them, else the spec's.
func (e *emitter) addCommand(n *yaml.Node, cs ctrSource) {
	command, args := cs.c.Command, cs.c.Args
	if cs.command != nil {
		command, args = cs.command, cs.args
	}
	if len(command) > 0 {
		add(n, field{"command", strs(e.at(cs.path+".command"), command)})
	}
	if len(args) > 0 {
		add(n, field{"args", strs(e.at(cs.path+".args"), args)})
	}
}

// addEnv adds the container's env (kiln's entries, then the spec's by
// name) and envFrom.
func (e *emitter) addEnv(n *yaml.Node, cs ctrSource) {
	c, path := cs.c, cs.path
	env := append([]*yaml.Node(nil), cs.env...)
	for _, k := range sortedKeys(c.Env) {
		env = append(env, e.envEntry(sub(path+".env", k), k, c.Env[k]))
	}
	if len(env) > 0 {
		add(n, field{"env", seq(e.at(path+".env"), env...)})
	}
	if len(c.EnvFrom) > 0 {
		add(n, field{"envFrom", e.envFrom(path+".envFrom", c.EnvFrom)})
	}
}

// addPorts adds the container's ports, the family's and the spec's,
// sorted by name.
func (e *emitter) addPorts(n *yaml.Node, cs ctrSource) {
	c, path := cs.c, cs.path
	ports := append([]portSource(nil), cs.ports...)
	for _, k := range sortedKeys(c.Ports) {
		ports = append(ports, portSource{k, c.Ports[k], e.at(sub(path+".ports", k))})
	}
	sort.Slice(ports, func(i, j int) bool { return ports[i].name < ports[j].name })
	if len(ports) == 0 {
		return
	}
	items := make([]*yaml.Node, len(ports))
	for i, pt := range ports {
		items[i] = mapping(pt.at,
			field{"name", str(pt.at, pt.name)},
			field{"containerPort", num(pt.at, pt.number)},
			field{"protocol", str(pt.at, "TCP")},
		)
	}
	add(n, field{"ports", seq(e.at(path+".ports"), items...)})
}

// volumeMount is one mount of a container and where it comes from.
type volumeMount struct {
	name, path, subPath string
	readOnly            bool
	at                  pos
}

// volumeMounts emits the container's mounts, sorted by volume name, and
// records the volumes they use in vols; kiln's own mounts are at p.
func (e *emitter) volumeMounts(cs ctrSource, p pos, vols *podVolumes, shm *Quantity) []*yaml.Node {
	mounts := e.mountsOf(cs, p, vols, shm)
	items := make([]*yaml.Node, len(mounts))
	for i, m := range mounts {
		items[i] = mapping(m.at, field{"name", str(m.at, m.name)}, field{"mountPath", str(m.at, m.path)})
		if m.readOnly {
			add(items[i], field{"readOnly", boolean(m.at, true)})
		}
		if m.subPath != "" {
			add(items[i], field{"subPath", str(m.at, m.subPath)})
		}
	}
	return items
}

// mountsOf lists the container's mounts: the spec's volumes and files,
// kiln's /tmp unless the spec mounts something there, and kiln's
// /dev/shm when shm is set and the spec mounts nothing there; sorted by
// volume name, then path.
func (e *emitter) mountsOf(cs ctrSource, p pos, vols *podVolumes, shm *Quantity) []volumeMount {
	c, path := cs.c, cs.path
	var mounts []volumeMount
	tmp, devShm := true, shm != nil
	for _, v := range sortedKeys(c.Mounts) {
		vols.spec[v] = true
		switch strings.TrimRight(c.Mounts[v], "/") {
		case "/tmp":
			tmp = false
		case "/dev/shm":
			devShm = false
		}
		mounts = append(mounts, volumeMount{v, c.Mounts[v], "", e.readOnlyVolume(v), e.at(sub(path+".mounts", v))})
	}
	for _, fp := range sortedKeys(c.Files) {
		ref := c.Files[fp]
		vol := refVolume(ref)
		vols.refs[vol] = FileRef{Config: ref.Config, Secret: ref.Secret}
		mounts = append(mounts, volumeMount{vol, fp, ref.Key, true, e.at(sub(path+".files", fp))})
	}
	if tmp {
		mounts = append(mounts, volumeMount{tmpVolume, "/tmp", "", false, p})
		vols.tmp = true
	}
	if devShm {
		mounts = append(mounts, volumeMount{shmVolume, "/dev/shm", "", false, p})
		vols.shm = shm
	}
	sort.SliceStable(mounts, func(i, j int) bool {
		if mounts[i].name != mounts[j].name {
			return mounts[i].name < mounts[j].name
		}
		return mounts[i].path < mounts[j].path
	})
	return mounts
}

// envEntry is one env variable: a literal, a configMapKeyRef or a secretKeyRef.
func (e *emitter) envEntry(path, name string, v EnvValue) *yaml.Node {
	ep := e.at(path)
	switch {
	case v.Config != "":
		return mapping(ep, field{"name", str(ep, name)}, field{"valueFrom", mapping(ep, field{"configMapKeyRef", mapping(ep,
			field{"name", str(e.at(path+".config"), v.Config)}, field{"key", str(e.at(path+".key"), v.Key)})})})
	case v.Secret != "":
		return mapping(ep, field{"name", str(ep, name)}, field{"valueFrom", mapping(ep, field{"secretKeyRef", mapping(ep,
			field{"name", str(e.at(path+".secret"), v.Secret)}, field{"key", str(e.at(path+".key"), v.Key)})})})
	}
	return mapping(ep, field{"name", str(ep, name)}, field{"value", str(ep, v.Value)})
}

// envFrom emits a container's envFrom in spec order: a configMapRef or a
// secretRef each, with its prefix.
func (e *emitter) envFrom(path string, refs []*EnvFrom) *yaml.Node {
	out := seq(e.at(path))
	for i, r := range refs {
		rp := path + "[" + itoa(i) + "]"
		at := e.at(rp)
		n := mapping(at)
		if r.Prefix != "" {
			add(n, field{"prefix", str(e.at(rp+".prefix"), r.Prefix)})
		}
		if r.Config != "" {
			add(n, field{"configMapRef", mapping(at, field{"name", str(e.at(rp+".config"), r.Config)})})
		} else {
			add(n, field{"secretRef", mapping(at, field{"name", str(e.at(rp+".secret"), r.Secret)})})
		}
		out.Content = append(out.Content, n)
	}
	return out
}

// refVolume is the pod volume name of a config or Secret: config-<name> or
// secret-<name> (dots replaced), shortened with a hash when longer than a
// DNS label allows, so that the same reference always gets the same name.
func refVolume(ref FileRef) string {
	name := "config-" + ref.Config
	if ref.Secret != "" {
		name = "secret-" + strings.ReplaceAll(ref.Secret, ".", "-")
	}
	if len(name) <= maxHostname {
		return name
	}
	h := fnv.New32a()
	h.Write([]byte(name))
	suffix := fmt.Sprintf("-%08x", h.Sum32())
	return strings.TrimRight(name[:maxHostname-len(suffix)], "-") + suffix
}

// fromJSON builds nodes from JSON the schema accepted (object keys sorted).
func fromJSON(p pos, raw []byte) *yaml.Node {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil
	}
	return jsonNode(p, v)
}

func jsonNode(p pos, v any) *yaml.Node {
	switch x := v.(type) {
	case map[string]any:
		n := mapping(p)
		for _, k := range sortedKeys(x) {
			add(n, field{k, jsonNode(p, x[k])})
		}
		return n
	case []any:
		n := seq(p)
		for _, it := range x {
			n.Content = append(n.Content, jsonNode(p, it))
		}
		return n
	case json.Number:
		tag := "!!int"
		if strings.ContainsAny(x.String(), ".eE") {
			tag = "!!float"
		}
		return p.set(&yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: x.String()})
	case bool:
		return boolean(p, x)
	case nil:
		return p.set(&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"})
	}
	return str(p, fmt.Sprint(v))
}

// resources: cpu is a request, memory a request and an equal limit, GPUs
// (the spec's gpus, else the family's count) a request and an equal limit
// of the vendor's resource (gpuResource, default nvidia.com/gpu).
func (e *emitter) resources(path string, r *Resources, gpus int) *yaml.Node {
	if r == nil {
		r = &Resources{}
	}
	p := e.at(path)
	req, lim := mapping(p), mapping(p)
	if r.CPU != "" {
		add(req, field{"cpu", quantity(e.at(path+".cpu"), r.CPU)})
	}
	if r.Memory != "" {
		mp := e.at(path + ".memory")
		add(req, field{"memory", quantity(mp, r.Memory)})
		add(lim, field{"memory", quantity(mp, r.Memory)})
	}
	gp := p
	if r.GPUs > 0 {
		gpus, gp = r.GPUs, e.at(path+".gpus")
	}
	if gpus > 0 {
		name := GPUResource
		if r.GPUResource != "" {
			name = r.GPUResource
		}
		add(req, field{name, num(gp, gpus)})
		add(lim, field{name, num(gp, gpus)})
	}
	if len(req.Content) == 0 {
		return nil
	}
	out := mapping(p)
	if len(lim.Content) > 0 {
		add(out, field{"limits", lim})
	}
	add(out, field{"requests", req})
	return out
}

// containerSecurity: no privilege escalation, all capabilities dropped, a
// read-only root filesystem, unless the spec says otherwise.
func (e *emitter) containerSecurity(path string, s *ContainerSecurity) *yaml.Node {
	p := e.at(path)
	if s == nil {
		s = &ContainerSecurity{}
	}
	sec := path + ".security"
	ape, ap := false, p
	if s.AllowPrivilegeEscalation != nil {
		ape, ap = *s.AllowPrivilegeEscalation, e.at(sec+".allowPrivilegeEscalation")
	}
	caps := mapping(p)
	if len(s.AddCapabilities) > 0 {
		cp := e.at(sec + ".addCapabilities")
		caps = mapping(cp, field{"add", strs(cp, s.AddCapabilities)})
	}
	add(caps, field{"drop", strs(p, []string{"ALL"})})
	ro, rp := true, p
	if s.ReadOnlyRootFilesystem != nil {
		ro, rp = *s.ReadOnlyRootFilesystem, e.at(sec+".readOnlyRootFilesystem")
	}
	sc := mapping(p,
		field{"allowPrivilegeEscalation", boolean(ap, ape)},
		field{"capabilities", caps},
		field{"readOnlyRootFilesystem", boolean(rp, ro)},
	)
	if s.RunAsGroup != nil {
		add(sc, field{"runAsGroup", num(e.at(sec+".runAsGroup"), *s.RunAsGroup)})
	}
	if s.RunAsUser != nil {
		add(sc, field{"runAsUser", num(e.at(sec+".runAsUser"), *s.RunAsUser)})
	}
	return sc
}

// probe emits a probe (nil when the spec has none).
func (e *emitter) probe(path string, pr *Probe) *yaml.Node {
	if pr == nil {
		return nil
	}
	p := e.at(path)
	n := mapping(p)
	switch {
	case pr.HTTPGet != nil:
		hp := e.at(path + ".httpGet")
		h := mapping(hp, field{"path", str(hp, pr.HTTPGet.Path)}, field{"port", portValue(e.at(path+".httpGet.port"), pr.HTTPGet.Port)})
		if pr.HTTPGet.Scheme != "" {
			add(h, field{"scheme", str(hp, pr.HTTPGet.Scheme)})
		}
		add(n, field{"httpGet", h})
	case pr.TCPSocket != nil:
		tp := e.at(path + ".tcpSocket")
		add(n, field{"tcpSocket", mapping(tp, field{"port", portValue(e.at(path+".tcpSocket.port"), pr.TCPSocket.Port)})})
	case pr.Exec != nil:
		xp := e.at(path + ".exec")
		add(n, field{"exec", mapping(xp, field{"command", strs(e.at(path+".exec.command"), pr.Exec.Command)})})
	case pr.GRPC != nil:
		gp := e.at(path + ".grpc")
		add(n, field{"grpc", mapping(gp, field{"port", num(e.at(path+".grpc.port"), pr.GRPC.Port)})})
	}
	for _, f := range []struct {
		key string
		v   *int
	}{{"initialDelaySeconds", pr.InitialDelaySeconds}, {"periodSeconds", pr.PeriodSeconds}, {"timeoutSeconds", pr.TimeoutSeconds}, {"failureThreshold", pr.FailureThreshold}} {
		if f.v != nil {
			add(n, field{f.key, num(e.at(path+"."+f.key), *f.v)})
		}
	}
	return n
}

func portValue(p pos, port Port) *yaml.Node {
	if port.Name != "" {
		return str(p, port.Name)
	}
	return num(p, port.Number)
}
