package compiler

import (
	"sort"
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
	p := e.at(ps.path)
	used := map[string]bool{}
	needTmp := false
	var inits, ctrs []*yaml.Node
	for _, cs := range ps.init {
		n, tmp := e.container(cs, used)
		needTmp = needTmp || tmp
		inits = append(inits, n)
	}
	for _, cs := range ps.containers {
		n, tmp := e.container(cs, used)
		needTmp = needTmp || tmp
		ctrs = append(ctrs, n)
	}
	spec := mapping(p)
	if ps.restartPolicy != "" {
		add(spec, field{"restartPolicy", str(p, ps.restartPolicy)})
	}
	add(spec, field{"securityContext", e.podSecurity(ps.path, ps.security)})
	if len(inits) > 0 {
		add(spec, field{"initContainers", seq(p, inits...)})
	}
	add(spec,
		field{"containers", seq(p, ctrs...)},
		field{"volumes", e.podVolumes(p, used, needTmp)},
	)
	return mapping(p,
		field{"metadata", mapping(p, field{"labels", stringMap(p, e.labels(name))})},
		field{"spec", spec},
	)
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

// container emits one container and records the spec volumes it mounts; it
// reports whether the container mounts kiln's /tmp emptyDir.
func (e *emitter) container(cs ctrSource, used map[string]bool) (*yaml.Node, bool) {
	c := cs.c
	path := cs.path
	p := e.at(path)
	n := mapping(p,
		field{"name", str(e.at(path+".name"), c.Name)},
		field{"image", str(e.at(path+".image"), c.Image)},
	)
	command, args := c.Command, c.Args
	if cs.command != nil {
		command, args = cs.command, cs.args
	}
	if len(command) > 0 {
		add(n, field{"command", strs(e.at(path+".command"), command)})
	}
	if len(args) > 0 {
		add(n, field{"args", strs(e.at(path+".args"), args)})
	}
	env := append([]*yaml.Node(nil), cs.env...)
	for _, k := range sortedKeys(c.Env) {
		ep := e.at(sub(path+".env", k))
		env = append(env, mapping(ep, field{"name", str(ep, k)}, field{"value", str(ep, c.Env[k])}))
	}
	if len(env) > 0 {
		add(n, field{"env", seq(e.at(path+".env"), env...)})
	}
	ports := append([]portSource(nil), cs.ports...)
	for _, k := range sortedKeys(c.Ports) {
		ports = append(ports, portSource{k, c.Ports[k], e.at(sub(path+".ports", k))})
	}
	sort.Slice(ports, func(i, j int) bool { return ports[i].name < ports[j].name })
	if len(ports) > 0 {
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
	// Mounts, sorted by volume name, with kiln's /tmp unless the spec mounts something there.
	type mount struct {
		name, path string
		readOnly   bool
		at         pos
	}
	var mounts []mount
	tmp := true
	for _, v := range sortedKeys(c.Mounts) {
		used[v] = true
		mp := strings.TrimRight(c.Mounts[v], "/")
		if mp == "/tmp" {
			tmp = false
		}
		mounts = append(mounts, mount{v, c.Mounts[v], e.readOnlyVolume(v), e.at(sub(path+".mounts", v))})
	}
	if tmp {
		mounts = append(mounts, mount{tmpVolume, "/tmp", false, p})
		sort.SliceStable(mounts, func(i, j int) bool { return mounts[i].name < mounts[j].name })
	}
	items := make([]*yaml.Node, len(mounts))
	for i, m := range mounts {
		items[i] = mapping(m.at, field{"name", str(m.at, m.name)}, field{"mountPath", str(m.at, m.path)})
		if m.readOnly {
			add(items[i], field{"readOnly", boolean(m.at, true)})
		}
	}
	if len(items) > 0 {
		add(n, field{"volumeMounts", seq(e.at(path+".mounts"), items...)})
	}
	return n, tmp
}

// resources: cpu is a request, memory a request and an equal limit, GPUs a
// request and an equal limit.
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
	if gpus > 0 {
		add(req, field{GPUResource, num(p, gpus)})
		add(lim, field{GPUResource, num(p, gpus)})
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
