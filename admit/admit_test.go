package admit

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kilnhq/kiln/manifest"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

func admitOne(t *testing.T, kube manifest.KubeVersion, in string) (*manifest.Object, Result) {
	t.Helper()
	objs, errs := manifest.Parse("in.yaml", []byte(in))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	a := New(objs, manifest.BuiltinKinds(), Options{KubeVersion: kube, User: "kiln:offline", Groups: []string{"system:authenticated"}})
	var res Result
	for _, o := range objs {
		res = a.Admit(o)
	}
	return objs[len(objs)-1], res
}

func describe(o *manifest.Object, r Result) string {
	var b strings.Builder
	for _, p := range r.Problems {
		fmt.Fprintf(&b, "%s %s @%s (%s)\n", p.Rule, p.Message, p.Field, o.Locate(p.Field))
	}
	return b.String()
}

const deploy = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: app
        image: nginx:1.27
`

// TestRejects: what a new user tries, each refused by the API server, and
// the rule and line kiln gives it.
func TestRejects(t *testing.T) {
	latest := manifest.LatestKube
	tests := []struct {
		name string
		kube manifest.KubeVersion
		in   string
		want string // rule, then a fragment of the message
		line int
	}{
		{"misspelled field", latest, strings.Replace(deploy, "      containers:", "      contianers:", 1), `schema/unknown-field unknown field "spec.template.spec.contianers"`, 9},
		{"replicas as a string", latest, strings.Replace(deploy, "spec:\n  selector", "spec:\n  replicas: \"3\"\n  selector", 1), "schema/type spec.replicas must be an integer, not a string", 5},
		{"no selector", latest, strings.Replace(deploy, "  selector: {matchLabels: {app: web}}\n", "", 1), "schema/required spec.selector: Required value", 4},
		{"selector does not match", latest, strings.Replace(deploy, "labels: {app: web}", "labels: {app: other}", 1), "schema/invalid spec.template.metadata.labels: Invalid value", 7},
		{"PodSecurityPolicy in policy/v1", latest, "apiVersion: policy/v1\nkind: PodSecurityPolicy\nmetadata: {name: p}\nspec: {}\n", "schema/unknown-kind policy/v1 PodSecurityPolicy is not a kind the API server knows", 1},
		{"autoscaling/v2 at 1.20", manifest.KubeVersion{Major: 1, Minor: 20}, "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: h}\nspec: {scaleTargetRef: {kind: Deployment, name: web}, maxReplicas: 3}\n", "schema/unserved-version autoscaling/v2 HorizontalPodAutoscaler is not served before Kubernetes 1.23; use apiVersion: autoscaling/v1", 1},
		{"VAP v1 at 1.28", manifest.KubeVersion{Major: 1, Minor: 28}, "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata: {name: p}\nspec: {validations: [{expression: 'true'}]}\n", "schema/unserved-version admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy is not served before Kubernetes 1.30", 1},
		{"Job without restartPolicy", latest, "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec:\n  template:\n    spec:\n      containers: [{name: c, image: busybox:1.36}]\n", `schema/required spec.template.spec.restartPolicy: Required value`, 6},
		{"invalid quantity", latest, strings.Replace(deploy, "image: nginx:1.27", "image: nginx:1.27\n        resources: {limits: {memory: 1GB}}", 1), `schema/type spec.template.spec.containers[0].resources.limits.memory: "1GB" is not a quantity`, 12},
		{"requests above limits", latest, strings.Replace(deploy, "image: nginx:1.27", "image: nginx:1.27\n        resources: {limits: {cpu: 100m}, requests: {cpu: 200m}}", 1), `schema/invalid spec.template.spec.containers[0].resources.requests: Invalid value: "200m": must be less than or equal to cpu limit of 100m`, 12},
		{"placeholder name", latest, strings.Replace(deploy, "metadata: {name: web, namespace: shop}", "metadata:\n  name: ${APP}\n  namespace: shop", 1), `schema/invalid metadata.name: Invalid value: "${APP}"`, 4},
		{"wrong type under an embedded struct", latest, "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c, image: i}]\n  volumes:\n  - {name: v, fc: {lun: \"x\"}}\n", "schema/type spec.volumes[0].fc.lun must be an integer, not a string", 7},
		{"label value y", latest, strings.Replace(deploy, "metadata: {name: web, namespace: shop}", "metadata: {name: web, namespace: shop, labels: {debug: y}}", 1), `schema/type metadata.labels.debug must be a string, not a boolean`, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, r := admitOne(t, tt.kube, tt.in)
			if !r.Rejected {
				t.Errorf("not rejected; problems:\n%s", describe(o, r))
			}
			got := describe(o, r)
			if !strings.Contains(got, tt.want) {
				t.Fatalf("problems:\n%s\nwant one containing %q", got, tt.want)
			}
			for _, p := range r.Problems {
				if strings.Contains(p.Rule+" "+p.Message, tt.want) {
					if line := o.Locate(p.Field).Line; line != tt.line {
						t.Errorf("%s at line %d, want %d", p.Rule, line, tt.line)
					}
				}
			}
		})
	}
}

// TestAdmittedObject: the object rules see is the one the server admits:
// defaulted, canonical quantities, unknown fields dropped, system fields set.
func TestAdmittedObject(t *testing.T) {
	in := strings.Replace(deploy, "image: nginx:1.27", "image: nginx:latest\n        ports: [{containerPort: 80}]\n        resources: {limits: {cpu: 1000m}}", 1)
	o, r := admitOne(t, manifest.LatestKube, in)
	if r.Rejected {
		t.Fatalf("rejected: %s", describe(o, r))
	}
	c, _ := o.Content()
	get := func(path ...string) any {
		var v any = c
		for _, p := range path {
			switch x := v.(type) {
			case map[string]any:
				v = x[p]
			case []any:
				v = x[0]
			}
		}
		return v
	}
	checks := []struct {
		path []string
		want any
	}{
		{[]string{"spec", "replicas"}, int64(1)},
		{[]string{"spec", "strategy", "type"}, "RollingUpdate"},
		{[]string{"spec", "revisionHistoryLimit"}, int64(10)},
		{[]string{"spec", "template", "spec", "restartPolicy"}, "Always"},
		{[]string{"spec", "template", "spec", "dnsPolicy"}, "ClusterFirst"},
		{[]string{"spec", "template", "spec", "containers", "0", "imagePullPolicy"}, "Always"},
		{[]string{"spec", "template", "spec", "containers", "0", "terminationMessagePath"}, "/dev/termination-log"},
		{[]string{"spec", "template", "spec", "containers", "0", "ports", "0", "protocol"}, "TCP"},
		{[]string{"spec", "template", "spec", "containers", "0", "resources", "limits", "cpu"}, "1"},
		{[]string{"metadata", "creationTimestamp"}, "2026-01-01T00:00:00Z"},
		{[]string{"metadata", "generation"}, int64(1)},
	}
	for _, ch := range checks {
		if got := get(ch.path...); got != ch.want {
			t.Errorf("%s = %#v, want %#v", strings.Join(ch.path, "."), got, ch.want)
		}
	}
	if uid, _ := get("metadata", "uid").(string); len(uid) != 36 {
		t.Errorf("uid = %q, want a UUID", uid)
	}
}

func TestGenerateNameAndNamespaceDefaults(t *testing.T) {
	in := "apiVersion: v1\nkind: Namespace\nmetadata: {generateName: team-}\n"
	o, r := admitOne(t, manifest.LatestKube, in)
	if r.Rejected {
		t.Fatal(describe(o, r))
	}
	c, _ := o.Content()
	name := c["metadata"].(map[string]any)["name"].(string)
	if !strings.HasPrefix(name, "team-") || len(name) != len("team-")+5 {
		t.Errorf("generated name %q", name)
	}
	if phase := c["status"].(map[string]any)["phase"]; phase != "Active" {
		t.Errorf("status.phase = %v, want Active", phase)
	}
	_, r2 := admitOne(t, manifest.LatestKube, in)
	o2, _ := admitOne(t, manifest.LatestKube, in)
	c2, _ := o2.Content()
	if r2.Rejected || c2["metadata"].(map[string]any)["name"] != name {
		t.Errorf("generated name is not deterministic")
	}
}

// TestCopiesJudgedOnce: a copy of a manifest (the same CRD in several
// bundles) gets the first copy's answer and admitted content, with its own uid.
func TestCopiesJudgedOnce(t *testing.T) {
	bad := strings.Replace(deploy, "  selector: {matchLabels: {app: web}}\n", "", 1)
	a1, _ := manifest.Parse("a.yaml", []byte(bad))
	b1, _ := manifest.Parse("b.yaml", []byte(bad))
	objs := append(a1, b1...)
	ad := New(objs, manifest.BuiltinKinds(), Options{KubeVersion: manifest.LatestKube})
	r1, r2 := ad.Admit(objs[0]), ad.Admit(objs[1])
	if !r1.Rejected || !r2.Rejected || describe(objs[0], r1) != strings.ReplaceAll(describe(objs[1], r2), "b.yaml", "a.yaml") {
		t.Fatalf("copies answered differently:\n%s\n%s", describe(objs[0], r1), describe(objs[1], r2))
	}
	uid := func(o *manifest.Object) any {
		c, _ := o.Content()
		if c["spec"].(map[string]any)["replicas"] != int64(1) {
			t.Errorf("%s: not the admitted object", o.File)
		}
		return c["metadata"].(map[string]any)["uid"]
	}
	if u1, u2 := uid(objs[0]), uid(objs[1]); u1 == u2 || u1 == nil {
		t.Errorf("uids %v and %v: want each copy's own", u1, u2)
	}
}

// TestNothingInventedInMessages: the values kiln fills in where the server
// would choose its own (uid, a generated name, cluster IPs, node ports)
// never reach a message, whatever the message quotes.
func TestNothingInventedInMessages(t *testing.T) {
	tests := []string{
		// A Job's generated selector and labels hold the uid.
		"apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec:\n  selector: {matchLabels: {app: x}}\n  template:\n    metadata: {labels: {app: z}}\n    spec: {restartPolicy: Never, containers: [{name: c, image: i}]}\n",
		// A generateName the server refuses: its generated name's own
		// error, which would quote it, is not repeated.
		"apiVersion: v1\nkind: Namespace\nmetadata: {generateName: a-b.}\n",
		// A Service with a cluster IP and a node port filled in, and
		// validation errors beside them.
		"apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec:\n  type: NodePort\n  externalIPs: [10.96.0.1]\n  selector: {app: web}\n  ports: [{port: 80}, {port: 81, nodePort: 30000, protocol: TCP}]\n",
	}
	for _, in := range tests {
		o, r := admitOne(t, manifest.LatestKube, in)
		c, _ := o.Content()
		var values []string
		if md, ok := c["metadata"].(map[string]any); ok {
			for _, k := range []string{"uid", "name"} {
				if v, _ := md[k].(string); v != "" && (k == "uid" || strings.Contains(in, "generateName")) {
					values = append(values, v)
				}
			}
		}
		if spec, ok := c["spec"].(map[string]any); ok {
			if ip, _ := spec["clusterIP"].(string); ip != "" {
				values = append(values, ip)
			}
		}
		if len(r.Problems) == 0 {
			t.Errorf("%s: no problem: the case tests nothing", in)
		}
		for _, p := range r.Problems {
			for _, v := range values {
				if strings.Contains(p.Message, v) {
					t.Errorf("%s\nmessage %q holds %q, which kiln made up", in, p.Message, v)
				}
			}
		}
	}
}

// TestLargeCopiesShareContent: copies of a large manifest (a CRD every
// overlay renders) share the first copy's admitted content but for their
// top level and metadata, which hold each copy's own uid.
func TestLargeCopiesShareContent(t *testing.T) {
	big := strings.Replace(deploy, "metadata: {name: web, namespace: shop}",
		"metadata: {name: web, namespace: shop, annotations: {note: "+strings.Repeat("x", copiesFrom)+"}}", 1)
	a1, _ := manifest.Parse("a.yaml", []byte(big))
	b1, _ := manifest.Parse("b.yaml", []byte(big))
	objs := append(a1, b1...)
	ad := New(objs, manifest.BuiltinKinds(), Options{KubeVersion: manifest.LatestKube})
	ad.Admit(objs[0])
	ad.Admit(objs[1])
	c1, _ := objs[0].Content()
	c2, _ := objs[1].Content()
	m1, m2 := c1["metadata"].(map[string]any), c2["metadata"].(map[string]any)
	if m1["uid"] == m2["uid"] || m1["uid"] == nil || m2["uid"] != stableUID(objs[1]) {
		t.Errorf("uids %v and %v: want each copy's own", m1["uid"], m2["uid"])
	}
	if fmt.Sprintf("%p", c1["spec"]) != fmt.Sprintf("%p", c2["spec"]) {
		t.Errorf("the copies' specs are two maps: want the admitted one shared")
	}
	delete(m2, "uid")
	delete(m1, "uid")
	if fmt.Sprint(c1) != fmt.Sprint(c2) {
		t.Errorf("copies' admitted content differs beyond the uid")
	}
}

// TestForgetCopies: once the copies' answers are forgotten, a further copy
// is admitted afresh (its own admitted content, the same answer), and the
// answers of the copies admitted afterwards are kept again.
func TestForgetCopies(t *testing.T) {
	big := strings.Replace(deploy, "metadata: {name: web, namespace: shop}",
		"metadata: {name: web, namespace: shop, annotations: {note: "+strings.Repeat("x", copiesFrom)+"}}", 1)
	var objs []*manifest.Object
	for _, f := range []string{"a.yaml", "b.yaml", "c.yaml"} {
		o, _ := manifest.Parse(f, []byte(big))
		objs = append(objs, o...)
	}
	ad := New(objs, manifest.BuiltinKinds(), Options{KubeVersion: manifest.LatestKube})
	r1 := ad.Admit(objs[0])
	ad.ForgetCopies()
	r2 := ad.Admit(objs[1])
	r3 := ad.Admit(objs[2])
	spec := func(o *manifest.Object) string {
		c, _ := o.Content()
		return fmt.Sprintf("%p", c["spec"])
	}
	if spec(objs[0]) == spec(objs[1]) {
		t.Error("a copy admitted after ForgetCopies shares the forgotten answer's content")
	}
	if spec(objs[1]) != spec(objs[2]) {
		t.Error("the copies admitted after ForgetCopies do not share their answer")
	}
	d1 := describe(objs[0], r1)
	for i, d := range []string{strings.ReplaceAll(describe(objs[1], r2), "b.yaml", "a.yaml"), strings.ReplaceAll(describe(objs[2], r3), "c.yaml", "a.yaml")} {
		if d != d1 {
			t.Errorf("copy %d answered differently:\n%s\nwant\n%s", i+2, d, d1)
		}
	}
}

// TestDecodedCopies: rendered copies of a large CRD that share one decoded
// content get the first copy's answer through it, with their own metadata,
// and the same answer as a copy told by its JSON.
func TestDecodedCopies(t *testing.T) {
	crd := `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  names: {kind: Widget, plural: widgets}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        description: ` + strings.Repeat("x", copiesFrom) + `
        properties:
          size: {type: bogus}
`
	rendered := func(unit string) *manifest.Object {
		var doc yaml.Node
		if err := yaml.Unmarshal([]byte(crd), &doc); err != nil {
			t.Fatal(err)
		}
		o, err := manifest.NewRenderedObject("crds/widget.yaml", unit, 0, doc.Content[0])
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	objs := []*manifest.Object{rendered("overlays/dev"), rendered("overlays/prod")}
	plain, _ := manifest.Parse("other/widget.yaml", []byte(crd)) // decoded on its own
	objs = append(objs, plain...)
	if !objs[0].SharesDecoded() {
		t.Fatal("the rendered copies do not share their decoded content: the case tests nothing")
	}
	ad := New(objs, manifest.BuiltinKinds(), Options{KubeVersion: manifest.LatestKube})
	var got []string
	for i, o := range objs {
		if i == 1 {
			// The answers told by JSON are forgotten: the rendered copy
			// gets its answer through the decoded content, the file's
			// copy is admitted afresh.
			ad.seen.Clear()
		}
		r := ad.Admit(o)
		if !r.Rejected {
			t.Fatalf("%s: not refused (the case tests nothing): %v", o.Unit, r.Problems)
		}
		got = append(got, fmt.Sprint(r.Problems))
	}
	if got[1] != got[0] || got[2] != got[0] {
		t.Errorf("copies answered differently:\n%s", strings.Join(got, "\n"))
	}
	n := 0
	ad.decoded.Range(func(any, any) bool { n++; return true })
	if n != 2 {
		t.Errorf("%d decoded answers kept, want 2 (one per decoded content)", n)
	}
	var specs, metas []string
	for _, o := range objs {
		c, _ := o.Content()
		specs = append(specs, fmt.Sprintf("%p", c["spec"]))
		metas = append(metas, fmt.Sprintf("%p", c["metadata"]))
	}
	if specs[0] != specs[1] {
		t.Errorf("the rendered copies' admitted specs are not shared: %v", specs)
	}
	if specs[2] == specs[0] {
		t.Errorf("the file's copy shares a forgotten answer: %v", specs)
	}
	if metas[0] == metas[1] || metas[1] == metas[2] {
		t.Errorf("metadata %v: want each copy's own (it holds the uid)", metas)
	}
	ad.ForgetCopies()
	n = 0
	ad.decoded.Range(func(any, any) bool { n++; return true })
	if n != 0 {
		t.Errorf("%d decoded answers kept after ForgetCopies", n)
	}
}

// TestServerWarningsAtTheirField: a server warning that names a field at
// its start points at that field's line, not at the object's first line.
func TestServerWarningsAtTheirField(t *testing.T) {
	tests := []struct {
		name, in, field string
		line            int
	}{
		{"deprecated volume", "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: d}\nspec:\n  containers: [{name: a, image: a}]\n  volumes:\n  - name: g\n    glusterfs: {endpoints: e, path: p}\n",
			"spec.volumes[0].glusterfs", 8},
		{"deprecated annotation", "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: c\n  namespace: d\n  annotations:\n    volume.beta.kubernetes.io/storage-class: fast\nspec:\n  accessModes: [ReadWriteOnce]\n  resources: {requests: {storage: 1Gi}}\n",
			"metadata.annotations[volume.beta.kubernetes.io/storage-class]", 7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, res := admitOne(t, manifest.LatestKube, tt.in)
			for _, p := range res.Problems {
				if p.Rule == RuleWarning {
					if p.Field != tt.field || o.Locate(p.Field).Line != tt.line {
						t.Errorf("warning %q at %q (line %d), want %q (line %d)", p.Message, p.Field, o.Locate(p.Field).Line, tt.field, tt.line)
					}
					return
				}
			}
			t.Fatalf("no server warning: %s", describe(o, res))
		})
	}
	if f := warningField("metadata.name: this is used in the Pod's hostname"); f != "metadata.name" {
		t.Errorf("warningField = %q", f)
	}
	if f := warningField("kyverno.io/v1 ClusterPolicy is deprecated"); f != "" {
		t.Errorf("warningField of a sentence = %q, want none", f)
	}
}
