package conformance

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/kilnhq/kiln/admit"
	"github.com/kilnhq/kiln/manifest"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestAllocated compares with a real kube-apiserver what kiln fills in on
// the server's behalf (admit.Filled) and the server's answer to every IP
// family request a Service can make (rules/schema/testdata/services.yaml),
// on a single-stack IPv4 service network and on a dual-stack one, each sent
// as a dry-run: the verdict and the messages must be the server's, and no
// message may hold a value kiln invented.
func TestAllocated(t *testing.T) {
	bin := needServers(t)
	networks := []struct {
		name  string
		cidrs []string
	}{
		{"ipv4", []string{"10.96.0.0/16"}}, // startServer's --service-cluster-ip-range
		{"dual-stack", []string{"10.96.0.0/16", "fd00:10:96::/112"}},
	}
	for _, n := range networks {
		t.Run(n.name, func(t *testing.T) {
			if len(n.cidrs) > 1 {
				withServiceCIDRs(t, bin, n.cidrs)
			}
			s := startServer(t)
			objs := readObjects(t, "../../rules/schema/testdata/services.yaml", generatedNames)
			createNamespace(t, s, "net")
			a := admit.New(objs, manifest.BuiltinKinds(), admit.Options{KubeVersion: manifest.LatestKube, ServiceCIDRs: n.cidrs})
			for _, o := range objs {
				body := bodyOf(t, o)
				var raw map[string]any
				_ = json.Unmarshal(body, &raw)
				res := a.Admit(o)
				name := o.Kind + "/" + o.Name
				noneInvented(t, name, o, raw, res)
				// The dry-run shows what the server fills in; the verdict is
				// a create's (a dry-run does not check a requested node port
				// against the range).
				code, resp, _, err := s.do("POST", collection(o)+"?dryRun=All&fieldValidation=Strict", body)
				if err != nil {
					t.Fatal(err)
				}
				created, created2, _, err := s.do("POST", collection(o)+"?fieldValidation=Strict", body)
				if err != nil {
					t.Fatal(err)
				}
				srv, kiln := serverAnswer(created, created2), kilnAnswer(res)
				if !slices.Equal(srv, kiln) {
					t.Errorf("%s: answers differ\n  server: %s\n  kiln:   %s", name, strings.Join(srv, " | "), strings.Join(kiln, " | "))
				}
				if code != 201 || res.Rejected {
					continue
				}
				var admitted map[string]any
				if err := json.Unmarshal(resp, &admitted); err != nil {
					t.Fatal(err)
				}
				kc, _ := o.Content()
				compareFilled(t, name, n.cidrs, raw, admitted, kc)
			}
		})
	}
}

// generatedNames are the objects of generated names (admit.Filled's
// generateName row), added to the Services.
const generatedNames = `---
apiVersion: v1
kind: ConfigMap
metadata: {generateName: settings-, namespace: net}
data: {a: b}
---
apiVersion: v1
kind: ConfigMap
metadata: {generateName: a-generate-name-of-sixty-characters-the-server-cuts-to-58-x-, namespace: net}
`

// withServiceCIDRs makes startServer's kube-apiserver serve the given
// service network: a wrapper that appends the flag (the last one wins), in
// a servers directory of its own.
func withServiceCIDRs(t *testing.T, bin string, cidrs []string) {
	dir := t.TempDir()
	script := fmt.Sprintf("#!/bin/sh\nexec %q \"$@\" --service-cluster-ip-range=%s\n", filepath.Join(bin, "kube-apiserver"), strings.Join(cidrs, ","))
	if err := os.WriteFile(filepath.Join(dir, "kube-apiserver"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(bin, "etcd"), filepath.Join(dir, "etcd")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KILN_SERVERS_DIR", dir)
}

func readObjects(t *testing.T, path, extra string) []*manifest.Object {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	objs, errs := manifest.Parse(filepath.Base(path), append(data, extra...))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	return objs
}

// bodyOf is what kubectl sends: the manifest as read, before admission.
func bodyOf(t *testing.T, o *manifest.Object) []byte {
	c, err := o.Content()
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func createNamespace(t *testing.T, s *apiServer, name string) {
	body := fmt.Sprintf(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":%q}}`, name)
	if code, b, _, err := s.do("POST", "/api/v1/namespaces", []byte(body)); err != nil || code != 201 {
		t.Fatalf("namespace %s: %d %s %v", name, code, status(b), err)
	}
}

// collection is the core collection an object is POSTed to.
func collection(o *manifest.Object) string {
	r, _ := builtinKinds.Lookup(schema.GroupVersionKind{Group: o.Group(), Version: o.Version(), Kind: o.Kind})
	ns := o.Namespace
	if ns == "" {
		ns = "default"
	}
	gv := "/api/" + o.Version()
	if o.Group() != "" {
		gv = "/apis/" + o.APIVersion
	}
	if !r.Namespaced {
		return gv + "/" + r.GVR.Resource
	}
	return gv + "/namespaces/" + ns + "/" + r.GVR.Resource
}

var (
	goFieldRE  = regexp.MustCompile(`Go struct field \w+\.(\S+) of type`)
	unknownRE  = regexp.MustCompile(`unknown field "([^"]+)"`)
	indexRE    = regexp.MustCompile(`\[[^\]]*\]`)
	embeddedRE = regexp.MustCompile(`\.[A-Z]\w*`)
)

// serverAnswer is the server's answer as comparable lines: "accepted", or
// each problem it names ("invalid <field>: <message>" for validation, "type
// <field>" for a value it cannot decode, "unknown <field>" for each unknown
// field), sorted.
func serverAnswer(code int, body []byte) []string {
	if code == 201 || code == 200 {
		return []string{"accepted"}
	}
	var st struct {
		Message string `json:"message"`
		Details struct {
			Causes []struct {
				Field, Message string
			} `json:"causes"`
		} `json:"details"`
	}
	_ = json.Unmarshal(body, &st)
	var out []string
	switch {
	case strings.Contains(st.Message, "cannot unmarshal"):
		if m := goFieldRE.FindStringSubmatch(st.Message); m != nil {
			out = append(out, "type "+embeddedRE.ReplaceAllString("."+m[1], "")[1:])
		}
	case strings.Contains(st.Message, "quantities must match"):
		out = append(out, "quantity")
	case strings.Contains(st.Message, "strict decoding error"):
		for _, m := range unknownRE.FindAllStringSubmatch(st.Message, -1) {
			out = append(out, "unknown "+m[1])
		}
	default:
		for _, c := range st.Details.Causes {
			out = append(out, "invalid "+c.Field+": "+c.Message)
		}
	}
	if len(out) == 0 {
		out = append(out, fmt.Sprintf("%d %s", code, st.Message))
	}
	sort.Strings(out)
	return out
}

// kilnAnswer is kiln's first answer (its problems not marked Next) as
// serverAnswer writes the server's.
func kilnAnswer(res admit.Result) []string {
	return kilnLines(res, false)
}

// kilnLines writes kiln's problems as serverAnswer writes the server's:
// with next, every problem (what a user fixing one after the other hears),
// else only the first answer.
func kilnLines(res admit.Result, next bool) []string {
	if !res.Rejected {
		return []string{"accepted"}
	}
	var out []string
	for _, p := range res.Problems {
		if p.Warning || (p.Next && !next) {
			continue
		}
		msg := strings.TrimSuffix(p.Message, admit.NextSuffix)
		switch p.Rule {
		case admit.RuleUnknownField:
			out = append(out, "unknown "+p.Field)
		case admit.RuleType:
			if strings.Contains(msg, "is not a quantity") {
				out = append(out, "quantity")
			} else {
				out = append(out, "type "+typeField(p.Field, msg))
			}
		default:
			out = append(out, "invalid "+msg)
		}
	}
	sort.Strings(out)
	return out
}

// typeField is the field the server's decoder names for a value of the
// wrong type: no list indexes, and the list or mapping for an entry.
func typeField(field, msg string) string {
	if strings.Contains(msg, "(every entry of ") {
		field = field[:max(strings.LastIndexAny(field, ".["), 0)]
	}
	return indexRE.ReplaceAllString(field, "")
}

// compareFilled checks each value of admit.Filled on an admitted Service or
// generated name: the server's dry-run answer and kiln's must agree where
// both come from the server's code and the cluster's configuration (IP
// families and policy), and be of the same shape where the server picks
// (uid, name, addresses and ports), as the table says.
func compareFilled(t *testing.T, name string, cidrs []string, raw, srv, kiln map[string]any) {
	str := func(m map[string]any, path string) string { s, _ := manifest.ValueAt(m, path).(string); return s }
	for _, f := range []string{"metadata.uid", "metadata.creationTimestamp", "metadata.name"} {
		if str(srv, f) == "" || str(kiln, f) == "" {
			t.Errorf("%s: %s: server %q, kiln %q: want both set", name, f, str(srv, f), str(kiln, f))
		}
	}
	if g := str(srv, "metadata.generateName"); g != "" {
		for who, n := range map[string]string{"server": str(srv, "metadata.name"), "kiln": str(kiln, "metadata.name")} {
			base := g[:min(len(g), 58)]
			if !strings.HasPrefix(n, base) || len(n) != len(base)+5 {
				t.Errorf("%s: %s generated %q from %q: want the first 58 characters and 5 more", name, who, n, g)
			}
		}
	}
	if mf, _ := manifest.ValueAt(srv, "metadata.managedFields").([]any); len(mf) == 0 {
		t.Errorf("%s: the server's dry-run has no managedFields (admit.Filled says it records the field manager)", name)
	}
	if mf := manifest.ValueAt(kiln, "metadata.managedFields"); mf != nil {
		t.Errorf("%s: kiln set managedFields %v (admit.Filled says it sets none)", name, mf)
	}
	if rv := str(srv, "metadata.resourceVersion"); rv != "" {
		t.Errorf("%s: the server's dry-run resourceVersion is %q (admit.Filled says empty)", name, rv)
	}
	if manifest.ValueAt(srv, "kind") != "Service" {
		return
	}
	for _, f := range []string{"spec.ipFamilyPolicy", "spec.ipFamilies"} {
		if s, k := fmt.Sprint(manifest.ValueAt(srv, f)), fmt.Sprint(manifest.ValueAt(kiln, f)); s != k {
			t.Errorf("%s: %s: server %s, kiln %s", name, f, s, k)
		}
	}
	srvIPs, _ := manifest.ValueAt(srv, "spec.clusterIPs").([]any)
	kilnIPs, _ := manifest.ValueAt(kiln, "spec.clusterIPs").([]any)
	if len(srvIPs) != len(kilnIPs) {
		t.Errorf("%s: cluster IPs: server %v, kiln %v", name, srvIPs, kilnIPs)
	}
	written, _ := manifest.ValueAt(raw, "spec.clusterIP").(string)
	for i := range min(len(srvIPs), len(kilnIPs)) {
		s, k := srvIPs[i].(string), kilnIPs[i].(string)
		if i == 0 && written != "" {
			if s != written || k != written {
				t.Errorf("%s: cluster IP %q written: server %s, kiln %s", name, written, s, k)
			}
			continue
		}
		prefix := rangeOf(t, cidrs, s)
		if s != prefix.Addr().String() {
			t.Errorf("%s: the server's dry-run cluster IP %s is not its range's network address (admit.Filled says it is)", name, s)
		}
		if k != prefix.Addr().Next().String() {
			t.Errorf("%s: kiln's cluster IP %s is not the range's first address %s (admit.Filled)", name, k, prefix.Addr().Next())
		}
	}
	rp, _ := manifest.ValueAt(raw, "spec.ports").([]any)
	sp, _ := manifest.ValueAt(srv, "spec.ports").([]any)
	kp, _ := manifest.ValueAt(kiln, "spec.ports").([]any)
	for i := range min(len(rp), len(sp), len(kp)) {
		w := manifest.ValueAt(rp[i], "nodePort")
		s, _ := manifest.ValueAt(sp[i], "nodePort").(float64)
		k, _ := manifest.ValueAt(kp[i], "nodePort").(int64)
		switch {
		case (s == 0) != (k == 0):
			t.Errorf("%s: spec.ports[%d].nodePort: server %v, kiln %v: want both set or neither", name, i, s, k)
		case w != nil || s == 0:
		case s < 32769:
			t.Errorf("%s: the server's dry-run node port %v is not 32769 or above (admit.Filled says a dry-run gives those)", name, s)
		case k < 30000 || k > 32767:
			t.Errorf("%s: kiln's node port %d is outside the node port range", name, k)
		}
	}
	if s, k := manifest.ValueAt(srv, "spec.healthCheckNodePort"), manifest.ValueAt(kiln, "spec.healthCheckNodePort"); (s == nil) != (k == nil) {
		t.Errorf("%s: spec.healthCheckNodePort: server %v, kiln %v", name, s, k)
	}
}

// rangeOf is the CIDR of cidrs that holds ip.
func rangeOf(t *testing.T, cidrs []string, ip string) netip.Prefix {
	addr, err := netip.ParseAddr(ip)
	if err != nil {
		t.Fatalf("cluster IP %q: %v", ip, err)
	}
	for _, c := range cidrs {
		p := netip.MustParsePrefix(c)
		if p.Contains(addr) {
			return p.Masked()
		}
	}
	t.Fatalf("cluster IP %s is in none of %v", ip, cidrs)
	return netip.Prefix{}
}

// noneInvented fails when one of kiln's messages holds a value kiln made up
// (admit.Filled's invented rows) on the object (raw is the manifest).
func noneInvented(t *testing.T, name string, o *manifest.Object, raw map[string]any, res admit.Result) {
	c, _ := o.Content()
	var values []string
	for _, f := range []string{"metadata.uid", "metadata.creationTimestamp", "spec.clusterIP", "spec.healthCheckNodePort"} {
		if v := manifest.ValueAt(c, f); v != nil && v != "None" && manifest.ValueAt(raw, f) == nil {
			values = append(values, fmt.Sprint(v))
		}
	}
	ports, _ := manifest.ValueAt(c, "spec.ports").([]any)
	rawPorts, _ := manifest.ValueAt(raw, "spec.ports").([]any)
	for i, p := range ports {
		if np := manifest.ValueAt(p, "nodePort"); np != nil && i < len(rawPorts) && manifest.ValueAt(rawPorts[i], "nodePort") == nil {
			values = append(values, fmt.Sprint(np))
		}
	}
	if g, _ := manifest.ValueAt(c, "metadata.generateName").(string); g != "" {
		values = append(values, manifest.ValueAt(c, "metadata.name").(string))
	}
	for _, p := range res.Problems {
		for _, v := range values {
			if strings.Contains(p.Message, v) {
				t.Errorf("%s: message %q holds %q, a value kiln made up", name, p.Message, v)
			}
		}
	}
}

// TestNextAsServerSays: kiln reports every problem of an object at once;
// a user who fixes what the server says, one answer after the other, hears
// exactly those, in that order (kiln's first answer is the server's, the
// rest marked Next). Each case is the manifest, then the manifest with the
// server's last answer fixed, until the server accepts it.
func TestNextAsServerSays(t *testing.T) {
	needServers(t)
	deploy := func(replicas, containers, selector, resources string) string {
		return "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop}\nspec:\n  replicas: " + replicas + "\n" + selector +
			"  template:\n    metadata: {labels: {app: web}}\n    spec:\n      " + containers + ": [{name: app, image: nginx:1.27" + resources + "}]\n"
	}
	sel := "  selector: {matchLabels: {app: web}}\n"
	cm := func(label, a string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  namespace: shop\n  labels: {" + label + ": x}\ndata: {a: " + a + "}\n"
	}
	long := strings.Repeat("a", 64)
	pod := func(lun, wwn string) string {
		return "apiVersion: v1\nkind: Pod\nmetadata: {name: fc, namespace: shop}\nspec:\n  containers: [{name: c, image: i, volumeMounts: [{name: v, mountPath: /m}]}]\n  volumes:\n  - name: v\n    fc: {" + wwn + "lun: " + lun + "}\n"
	}
	tests := []struct {
		name  string
		steps []string
	}{
		{"replicas hides a misspelled field", []string{
			deploy(`"3"`, "contianers", sel, ""), deploy("3", "contianers", sel, ""), deploy("3", "containers", sel, "")}},
		{"a quantity hides a missing selector", []string{
			deploy("1", "containers", "", ", resources: {limits: {memory: 1GB}}"), deploy("1", "containers", "", ", resources: {limits: {memory: 1Gi}}"),
			deploy("1", "containers", sel, ", resources: {limits: {memory: 1Gi}}")}},
		{"data hides a long label", []string{cm(long, "1"), cm(long, `"1"`), cm("a", `"1"`)}},
		{"a lun of the wrong type hides nothing", []string{pod(`"x"`, "targetWWNs: [a], "), pod("0", "targetWWNs: [a], ")}},
		{"a lun of the wrong type hides a missing target", []string{pod(`"x"`, ""), pod("0", ""), pod("0", "wwids: [a], ")}},
	}
	s := startServer(t)
	createNamespace(t, s, "shop")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var heard []string
			for i, step := range tt.steps {
				objs, errs := manifest.Parse("step.yaml", []byte(step))
				if len(errs) > 0 {
					t.Fatal(errs)
				}
				code, resp, _, err := s.do("POST", collection(objs[0])+"?dryRun=All&fieldValidation=Strict", bodyOf(t, objs[0]))
				if err != nil {
					t.Fatal(err)
				}
				answer := serverAnswer(code, resp)
				if last := i == len(tt.steps)-1; last != (answer[0] == "accepted") {
					t.Fatalf("step %d: the server answers %v: the case's steps are wrong", i, answer)
				}
				if answer[0] != "accepted" {
					heard = append(heard, answer...)
				}
			}
			objs, _ := manifest.Parse("first.yaml", []byte(tt.steps[0]))
			res := admit.New(objs, manifest.BuiltinKinds(), admit.Options{KubeVersion: manifest.LatestKube}).Admit(objs[0])
			sort.Strings(heard)
			if got := kilnLines(res, true); !slices.Equal(got, heard) {
				t.Errorf("kiln at once: %s\nthe server, fix after fix: %s", strings.Join(got, " | "), strings.Join(heard, " | "))
			}
			first, _ := manifest.Parse("first.yaml", []byte(tt.steps[0]))
			code, resp, _, _ := s.do("POST", collection(first[0])+"?dryRun=All&fieldValidation=Strict", bodyOf(t, first[0]))
			if got, want := kilnAnswer(res), serverAnswer(code, resp); !slices.Equal(got, want) {
				t.Errorf("kiln's first answer %v, the server's %v", got, want)
			}
		})
	}
}
