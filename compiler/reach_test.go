package compiler

import (
	"bytes"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"

	"cuelang.org/go/cue"
	"github.com/kilnhq/kiln/manifest"
	"sigs.k8s.io/yaml"
)

// reachBase is the spec every change of TestEveryFieldReachesOutput starts from.
const reachBase = "testdata/reach/app.yaml"

// noOutput lists the schema leaves that by design change no compiled
// object, with the reason.
var noOutput = map[string]string{
	"apiVersion": "the spec's header, checked and not compiled",
	"kind":       "the spec's header, checked and not compiled",
}

// change sets one leaf of the base spec: the spec compiled with the leaf
// at from (nil: as in the base) and the spec compiled with it at to must
// differ. prep edits both specs first (to give the leaf a valid context,
// e.g. a probe with the handler the leaf belongs to).
type change struct {
	at       string // a path in the spec: keys by name, list items by index (containers[0])
	from, to any
	prep     []edit
}

// edit sets the value at a path; the value remove deletes the key.
type edit struct {
	at string
	v  any
}

// remove, as an edit's value, deletes the key.
var remove = &struct{ remove bool }{true}

func ch(at string, from, to any, prep ...edit) change {
	return change{at: at, from: from, to: to, prep: prep}
}

// obj is a spec mapping, written briefly.
type obj = map[string]any

// list is a spec list, written briefly.
type list = []any

// reachChanges is one change per schema leaf (TestEveryFieldReachesOutput
// fails on a leaf with none). Containers, probes, pods and pod security
// are the same definitions in several places; their changes are made for
// each place.
func reachChanges() []change {
	route := edit{"spec.services.web.routes.public", obj{"host": "shop.example.com"}}
	gpu := edit{"spec.services.web.containers[0].resources", obj{"gpus": 1}}
	cs := []change{
		ch("metadata.name", nil, "store"),
		ch("metadata.namespace", nil, "store"),
		ch("metadata.labels.team", "a", "b"),
		ch("metadata.annotations.note", "a", "b"),
		ch("spec.target.kubernetes", "1.26", "1.25", edit{"spec.services.web.sidecars", remove}, edit{"spec.jobs.nightly.sidecars", remove}, edit{"spec.training.pretrain.sidecars", remove}),
		ch("spec.target.jobset", "v0.5", "v0.4"),
		ch("spec.namespace.security.enforce", "baseline", "restricted"),
		ch("spec.namespace.security.audit", "baseline", "restricted"),
		ch("spec.namespace.security.warn", "baseline", "restricted"),
		ch("spec.namespace.security.version", "v1.30", "v1.31"),
		ch("spec.namespace.labels.istio-injection", "enabled", "disabled"),
		ch("spec.configs.app.data.LEVEL", "info", "warn"),
		ch("spec.configs.app.files.app-conf", "a.conf", "b.conf"),
		ch("spec.volumes.logs.scratch.medium", "", "Memory"),
		ch("spec.volumes.logs.scratch.sizeLimit", "1Gi", "2Gi"),
		ch("spec.volumes.data.shared.size", "1Gi", "2Gi"),
		ch("spec.volumes.data.shared.storageClass", "a", "b"),
		ch("spec.volumes.data.shared.accessMode", "ReadWriteOnce", "ReadOnlyMany"),
		ch("spec.volumes.models.claim.name", "a", "b"),
		ch("spec.volumes.models.claim.readOnly", false, true),
		ch("spec.services.web.replicas", 1, 2),
		ch("spec.services.web.ports.http", 8080, 8081),
		ch("spec.target.ingress", "gateway", "ingress", route),
		ch("spec.target.gateway.name", "a", "b", route),
		ch("spec.target.gateway.namespace", "a", "b", route),
		ch("spec.target.gateway.listener", "a", "b", route),
		ch("spec.target.ingressClass", "a", "b", route, edit{"spec.target.ingress", "ingress"}, edit{"spec.target.gateway", remove}),
		ch("spec.services.web.routes.public.host", "a.example.com", "b.example.com", route),
		ch("spec.services.web.routes.public.paths", list{"/a"}, list{"/b"}, route),
		ch("spec.services.web.routes.public.port", "http", "admin", route, edit{"spec.services.web.ports.admin", 9000}),
		ch("spec.services.web.routes.public.tls.secret", "a", "b", route, edit{"spec.target.ingress", "ingress"}, edit{"spec.target.gateway", remove}),
		ch("spec.services.web.network.allowFrom[0].service", "web", "api", edit{"spec.services.api", obj{"containers": list{obj{"name": "a", "image": "x"}}}}),
		ch("spec.services.web.network.allowFrom[0].job", "nightly", "weekly", edit{"spec.jobs.weekly", obj{"containers": list{obj{"name": "a", "image": "x"}}}}),
		ch("spec.services.web.network.allowFrom[0].namespaces.team", "a", "b"),
		ch("spec.services.web.network.egress[0].cidr", "10.0.0.0/8", "10.0.0.0/16"),
		ch("spec.services.web.network.egress[0].except", list{"10.1.0.0/16"}, list{"10.2.0.0/16"}, edit{"spec.services.web.network.egress[0].cidr", "10.0.0.0/8"}),
		ch("spec.services.web.network.egress[0].namespaces.team", "a", "b"),
		ch("spec.services.web.network.egress[0].ports", list{443}, list{444}, edit{"spec.services.web.network.egress[0].cidr", "10.0.0.0/8"}),
		ch("spec.services.web.autoscale.min", 1, 2, autoscaled()...),
		ch("spec.services.web.autoscale.max", 5, 6, autoscaled()...),
		ch("spec.services.web.autoscale.cpu", 50, 60, autoscaled()...),
		ch("spec.services.web.autoscale.memory", nil, 60, autoscaled()...),
		ch("spec.services.web.disruption.minAvailable", 1, "50%", edit{"spec.services.web.replicas", 3}),
		ch("spec.services.web.disruption.maxUnavailable", 1, 2, edit{"spec.services.web.replicas", 3}),
		ch("spec.jobs.nightly.schedule", "0 3 * * *", "@hourly"),
		ch("spec.jobs.nightly.timeZone", "UTC", "Europe/Berlin"),
		ch("spec.jobs.nightly.concurrency", "Forbid", "Replace"),
		ch("spec.jobs.nightly.backoff", 1, 2),
		ch("spec.jobs.nightly.ttlAfterFinished", "1h", "2h"),
		ch("spec.training.pretrain.framework", "pytorch", "generic"),
		ch("spec.training.pretrain.nodes", 2, 3),
		ch("spec.training.pretrain.gpusPerNode", 1, 2),
		ch("spec.training.ranker.parameterServers", 1, 2),
		ch("spec.training.ranker.roles.chief.resources.cpu", "1", "2"),
		ch("spec.training.ranker.roles.chief.resources.memory", "1Gi", "2Gi"),
		ch("spec.training.ranker.roles.ps.resources.cpu", "1", "2"),
		ch("spec.training.ranker.roles.ps.resources.memory", "1Gi", "2Gi"),
		ch("spec.training.pretrain.shm", "1Gi", "2Gi"),
		ch("spec.training.pretrain.resources.gpuResource", "amd.com/gpu", "nvidia.com/gpu", edit{"spec.training.pretrain.gpusPerNode", 1}),
		ch("spec.services.web.shm", "1Gi", "2Gi"),
		ch("spec.jobs.nightly.shm", "1Gi", "2Gi"),
		ch("spec.target.gpuPool.nodeSelector.pool", "a", "b", gpu),
		ch("spec.target.gpuPool.tolerations[0].key", "a", "b", gpu, edit{"spec.target.gpuPool.tolerations", list{obj{"key": "a", "operator": "Exists"}}}),
		ch("spec.target.gpuPool.tolerations[0].operator", "Equal", "Exists", gpu, edit{"spec.target.gpuPool.tolerations", list{obj{"key": "a", "operator": "Equal", "value": "a"}}}, edit{"spec.target.gpuPool.tolerations[0].value", remove}),
		ch("spec.target.gpuPool.tolerations[0].value", "a", "b", gpu, edit{"spec.target.gpuPool.tolerations", list{obj{"key": "a", "operator": "Equal", "value": "a"}}}),
		ch("spec.target.gpuPool.tolerations[0].effect", "NoSchedule", "NoExecute", gpu, edit{"spec.target.gpuPool.tolerations", list{obj{"key": "a", "operator": "Exists"}}}),
		ch("spec.target.gpuPool.tolerations[0].tolerationSeconds", 1, 2, gpu, edit{"spec.target.gpuPool.tolerations", list{obj{"key": "a", "operator": "Exists", "effect": "NoExecute"}}}),
		ch("spec.training.pretrain.restartStrategy", "Recreate", "BlockingRecreate"),
		ch("spec.training.pretrain.onPreemption", "restart", "count"),
		ch("spec.training.pretrain.ttlAfterFinished", "1h", "2h"),
		ch("spec.training.pretrain.queue", "a", "b"),
		ch("spec.training.pretrain.port", 29500, 29501),
		ch("spec.training.pretrain.maxRestarts", 1, 2),
	}
	cs = append(cs, runChanges("spec.training.pretrain")...)
	cs = append(cs, containerChanges("spec.jobs.nightly.containers[0]")...)
	for _, w := range []string{"spec.services.web", "spec.jobs.nightly", "spec.training.pretrain"} {
		cs = append(cs, podChanges(w+".pod")...)
		cs = append(cs, podSecurityChanges(w+".security")...)
		cs = append(cs, initChanges(w+".init[0]")...)
		cs = append(cs, containerChanges(w+".sidecars[0]")...)
	}
	return append(cs, containerChanges("spec.services.web.containers[0]")...)
}

// autoscaled makes the base's web service autoscaled on CPU, its
// containers requesting CPU and memory.
func autoscaled() []edit {
	res := obj{"cpu": "1", "memory": "1Gi"}
	return []edit{
		{"spec.services.web.autoscale", obj{"max": 5, "cpu": 50}},
		{"spec.services.web.containers[0].resources", res},
		{"spec.services.web.sidecars[0].resources", res},
	}
}

// runChanges are the changes of what a container runs with (a container's
// or a training job's).
func runChanges(at string) []change {
	config := obj{"config": "app", "key": "LEVEL"}
	secret := obj{"secret": "db", "key": "password"}
	return []change{
		ch(at+".image", "example.com/a:1", "example.com/b:1"),
		ch(at+".command", list{"a"}, list{"b"}),
		ch(at+".args", list{"a"}, list{"b"}),
		ch(at+".env.MODE", "a", "b"),
		ch(at+".env.LEVEL.config", "app", "other", edit{at + ".env.LEVEL", config}),
		ch(at+".env.LEVEL.key", "LEVEL", "MODE", edit{at + ".env.LEVEL", config}),
		ch(at+".env.PASSWORD.secret", "a", "b", edit{at + ".env.PASSWORD", secret}),
		ch(at+".files./etc/app.config", "app", "other", edit{at + ".files./etc/app", config}),
		ch(at+".files./etc/app.key", "LEVEL", "MODE", edit{at + ".files./etc/app", config}),
		ch(at+".files./etc/db.secret", "a", "b", edit{at + ".files./etc/db", secret}),
		ch(at+".mounts.logs", "/a", "/b"),
		ch(at+".envFrom[0].config", "app", "other", edit{at + ".envFrom", list{obj{"config": "app"}}}),
		ch(at+".envFrom[0].secret", "a", "b", edit{at + ".envFrom", list{obj{"secret": "a"}}}),
		ch(at+".envFrom[0].prefix", "A_", "B_", edit{at + ".envFrom", list{obj{"config": "app"}}}),
		ch(at+".resources.cpu", "1", "2"),
		ch(at+".resources.memory", "1Gi", "2Gi"),
	}
}

// initChanges are the changes of an init container.
func initChanges(at string) []change {
	return append(runChanges(at),
		ch(at+".name", "a", "b"),
		ch(at+".resources.gpus", 1, 2),
		ch(at+".resources.gpuResource", "amd.com/gpu", "nvidia.com/gpu", edit{at + ".resources.gpus", 1}),
		ch(at+".security.runAsUser", 1000, 1001),
		ch(at+".security.runAsGroup", 1000, 1001),
		ch(at+".security.readOnlyRootFilesystem", true, false),
		ch(at+".security.allowPrivilegeEscalation", false, true),
		ch(at+".security.addCapabilities", list{"NET_BIND_SERVICE"}, list{"NET_RAW"}),
	)
}

// containerChanges are the changes of a container or a sidecar.
func containerChanges(at string) []change {
	cs := append(initChanges(at), ch(at+".ports.admin", 9000, 9001))
	for _, probe := range []string{"startup", "ready", "live"} {
		cs = append(cs, probeChanges(at+"."+probe)...)
	}
	return cs
}

// probeChanges are the changes of a probe: each handler's fields with that
// handler, the timings with any.
func probeChanges(at string) []change {
	http := edit{at, obj{"httpGet": obj{"port": 8080}}}
	tcp := edit{at, obj{"tcpSocket": obj{"port": 8080}}}
	return []change{
		ch(at+".httpGet.path", "/a", "/b", http),
		ch(at+".httpGet.port", 8080, 8081, http),
		ch(at+".httpGet.scheme", "HTTP", "HTTPS", http),
		ch(at+".tcpSocket.port", 8080, 8081, tcp),
		ch(at+".exec.command", list{"a"}, list{"b"}, edit{at, obj{"exec": obj{"command": list{"a"}}}}),
		ch(at+".grpc.port", 8080, 8081, edit{at, obj{"grpc": obj{"port": 8080}}}),
		ch(at+".initialDelaySeconds", 1, 2, tcp),
		ch(at+".periodSeconds", 1, 2, tcp),
		ch(at+".timeoutSeconds", 1, 2, tcp),
		ch(at+".failureThreshold", 1, 2, tcp),
	}
}

// podChanges are the changes of a pod block.
func podChanges(at string) []change {
	toleration := edit{at + ".tolerations", list{obj{"key": "a", "operator": "Equal", "value": "a", "effect": "NoExecute"}}}
	spread := edit{at + ".topologySpread", list{obj{"topologyKey": "zone"}}}
	return []change{
		ch(at+".labels.team", "a", "b"),
		ch(at+".annotations.note", "a", "b"),
		ch(at+".serviceAccount", "a", "b"),
		ch(at+".nodeSelector.pool", "a", "b"),
		ch(at+".tolerations[0].key", "a", "b", toleration),
		ch(at+".tolerations[0].operator", "Equal", "Exists", toleration, edit{at + ".tolerations[0].value", remove}),
		ch(at+".tolerations[0].value", "a", "b", toleration),
		ch(at+".tolerations[0].effect", "NoExecute", "NoSchedule", toleration),
		ch(at+".tolerations[0].tolerationSeconds", 1, 2, toleration),
		ch(at+".affinity", nil, obj{"podAntiAffinity": obj{"preferredDuringSchedulingIgnoredDuringExecution": list{
			obj{"weight": 1, "podAffinityTerm": obj{"topologyKey": "zone"}}}}}),
		ch(at+".topologySpread[0].topologyKey", "zone", "host", spread),
		ch(at+".topologySpread[0].maxSkew", 1, 2, spread),
		ch(at+".topologySpread[0].whenUnsatisfiable", "DoNotSchedule", "ScheduleAnyway", spread),
		ch(at+".priorityClass", "a", "b"),
		ch(at+".imagePullSecrets", list{"a"}, list{"b"}),
		ch(at+".terminationGracePeriod", "1m", "2m"),
	}
}

// podSecurityChanges are the changes of a pod's security block.
func podSecurityChanges(at string) []change {
	return []change{
		ch(at+".runAsNonRoot", true, false),
		ch(at+".runAsUser", 1000, 1001),
		ch(at+".runAsGroup", 1000, 1001),
		ch(at+".fsGroup", 1000, 1001),
	}
}

// TestEveryFieldReachesOutput sets every leaf field of schemas/app.cue on a
// base spec and wants each to change the compiled output: a field the
// schema accepts and the emitters drop fails here (as spec.namespace.labels
// once did). A new schema field fails until reachChanges sets it, or
// noOutput says why it changes nothing.
func TestEveryFieldReachesOutput(t *testing.T) {
	ev, err := getEvaluator()
	if err != nil {
		t.Fatal(err)
	}
	var leaves []string
	schemaLeaves(ev.app, "", &leaves)
	evaluators.Put(ev)
	sort.Strings(leaves)
	if len(leaves) < 100 {
		t.Fatalf("the schema walk found %d leaves: it is broken", len(leaves))
	}
	data, err := os.ReadFile(reachBase)
	if err != nil {
		t.Fatal(err)
	}
	var base obj
	if err := yaml.Unmarshal(data, &base); err != nil {
		t.Fatal(err)
	}
	if _, err := compileSpec(base); err != nil {
		t.Fatalf("the base spec does not compile: %v", err)
	}
	covered := map[string]bool{}
	for _, c := range reachChanges() {
		leaf, err := leafOf(leaves, c.at)
		if err != nil {
			t.Error(err)
			continue
		}
		if covered[leaf] {
			t.Errorf("%s: a second change of %s", c.at, leaf)
		}
		covered[leaf] = true
		before, after := deepCopy(base).(obj), deepCopy(base).(obj)
		for _, e := range c.prep {
			set(t, before, e.at, e.v)
			set(t, after, e.at, e.v)
		}
		if c.from != nil {
			set(t, before, c.at, c.from)
		}
		set(t, after, c.at, c.to)
		a, err := compileSpec(before)
		if err != nil {
			t.Errorf("%s = %v: the spec does not compile: %v", c.at, c.from, err)
			continue
		}
		b, err := compileSpec(after)
		if err != nil {
			t.Errorf("%s = %v: the spec does not compile: %v", c.at, c.to, err)
			continue
		}
		if bytes.Equal(a, b) {
			t.Errorf("%s: setting it to %v instead of %v changes no compiled object: the emitters drop the field", c.at, c.to, c.from)
		}
	}
	for _, leaf := range leaves {
		_, by := noOutput[leaf]
		switch {
		case !covered[leaf] && !by:
			t.Errorf("schemas/app.cue's %s: no change in reachChanges sets it; add one, or say in noOutput why it changes no compiled object", leaf)
		case covered[leaf] && by:
			t.Errorf("%s is in noOutput and reachChanges sets it: remove it from one", leaf)
		}
	}
}

// compileSpec compiles a spec given as a mapping, as if read from reachBase.
func compileSpec(spec obj) ([]byte, error) {
	data, err := yaml.Marshal(spec)
	if err != nil {
		return nil, err
	}
	objs, errs := manifest.Parse(reachBase, data)
	if len(errs) > 0 {
		return nil, errs[0]
	}
	out, err := Compile(objs[0])
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	err = manifest.Write(&b, out)
	return b.Bytes(), err
}

// leafOf is the schema leaf a spec path sets: a map's keys match *, a
// list's indexes [].
func leafOf(leaves []string, at string) (string, error) {
	segs := strings.Split(at, ".")
	var match []string
	for _, leaf := range leaves {
		if ls := strings.Split(leaf, "."); len(ls) == len(segs) && segsMatch(ls, segs) {
			match = append(match, leaf)
		}
	}
	if len(match) != 1 {
		return "", fmt.Errorf("%s: matches %d schema leaves %v, want one", at, len(match), match)
	}
	return match[0], nil
}

func segsMatch(leaf, spec []string) bool {
	for i, s := range spec {
		l := leaf[i]
		if name, _, indexed := strings.Cut(s, "["); indexed {
			if l != name+"[]" && l != "*[]" {
				return false
			}
		} else if l != s && l != "*" {
			return false
		}
	}
	return true
}

// set puts v at a spec path, making the mappings on the way.
func set(t *testing.T, spec obj, at string, v any) {
	t.Helper()
	v = deepCopy(v) // the specs compared never share a value
	segs := strings.Split(at, ".")
	cur := any(spec)
	for i, s := range segs {
		name, idx := s, -1
		if n, rest, ok := strings.Cut(s, "["); ok {
			name = n
			var err error
			if idx, err = strconv.Atoi(strings.TrimSuffix(rest, "]")); err != nil {
				t.Fatalf("%s: bad index in %q", at, s)
			}
		}
		m, ok := cur.(obj)
		if !ok {
			t.Fatalf("%s: %s is not a mapping", at, strings.Join(segs[:i], "."))
		}
		last := i == len(segs)-1
		if idx < 0 {
			switch {
			case last && v == remove:
				delete(m, name)
			case last:
				m[name] = v
			case m[name] == nil:
				m[name] = obj{}
			}
			cur = m[name]
			continue
		}
		l, _ := m[name].(list)
		switch {
		case idx == len(l):
			l = append(l, obj{})
		case idx > len(l):
			t.Fatalf("%s: %s has %d items", at, name, len(l))
		}
		m[name] = l
		switch {
		case last && v == remove:
			m[name] = append(l[:idx:idx], l[idx+1:]...)
		case last:
			l[idx] = v
		}
		cur = l[idx]
	}
}

func deepCopy(v any) any {
	switch x := v.(type) {
	case obj:
		out := obj{}
		for k, e := range x {
			out[k] = deepCopy(e)
		}
		return out
	case list:
		out := make(list, len(x))
		for i, e := range x {
			out[i] = deepCopy(e)
		}
		return out
	}
	return v
}

// schemaLeaves appends every leaf field of v to out: path segments joined
// by dots, a map's entries (a pattern constraint) written *, a list's
// elements []. A leaf is a field that holds no struct (a scalar, a list of
// scalars, an open struct such as affinity), or a field one of whose
// alternatives is a scalar (an env value is a string or a reference).
func schemaLeaves(v cue.Value, path string, out *[]string) {
	structs := structsOf(v)
	if len(structs) == 0 || hasScalarAlternative(v) {
		if elem := v.LookupPath(cue.MakePath(cue.AnyIndex)); v.IncompleteKind() == cue.ListKind && len(structsOf(elem)) > 0 {
			schemaLeaves(elem, path+"[]", out)
			return
		}
		*out = append(*out, path)
	}
	for _, s := range structs {
		it, err := s.Fields(cue.Optional(true), cue.Patterns(true))
		if err != nil {
			continue
		}
		n := 0
		for it.Next() {
			n++
			name := "*"
			if it.Selector().Type()&cue.PatternConstraint == 0 {
				name = it.Selector().Unquoted()
			}
			if path != "" {
				name = path + "." + name
			}
			schemaLeaves(it.Value(), name, out)
		}
		if n == 0 {
			*out = append(*out, path) // any fields
		}
	}
}

// hasScalarAlternative reports whether v is, or may be, something other
// than a struct.
func hasScalarAlternative(v cue.Value) bool {
	if op, args := v.Expr(); op == cue.OrOp {
		for _, a := range args {
			if hasScalarAlternative(a) {
				return true
			}
		}
		return false
	}
	return v.IncompleteKind() != cue.StructKind
}
