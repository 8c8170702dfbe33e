package compiler

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/kilnhq/kiln/internal/golden"
	"github.com/kilnhq/kiln/manifest"
)

// exampleNames are the compiler's examples: examples/<name>/app.yaml with
// the compiled output checked in under examples/<name>/out.
var exampleNames = []string{"mesh", "psa-migration", "pytorch", "tensorflow", "web"}

// examples lists the example specs.
func examples(t testing.TB) []string {
	t.Helper()
	var specs []string
	for _, n := range exampleNames {
		specs = append(specs, filepath.Join("..", "examples", n, "app.yaml"))
	}
	return specs
}

// compileFile reads a spec file and compiles its one spec.
func compileFile(t testing.TB, path string) []*manifest.Object {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	objs, errs := manifest.Parse(path, data)
	if len(errs) > 0 || len(objs) != 1 {
		t.Fatalf("%s: want one spec, got %d objects, errors %v", path, len(objs), errs)
	}
	if !IsSpec(objs[0]) {
		t.Fatalf("%s: not an App spec", path)
	}
	out, err := Compile(objs[0])
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return out
}

func stream(t testing.TB, objs []*manifest.Object) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := manifest.Write(&b, objs); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestExamplesGolden compiles every example and compares the stream with
// testdata/<example>.golden (go test -update rewrites them).
func TestExamplesGolden(t *testing.T) {
	for _, spec := range examples(t) {
		name := filepath.Base(filepath.Dir(spec))
		t.Run(name, func(t *testing.T) {
			golden.Check(t, "testdata/"+name+".golden", stream(t, compileFile(t, spec)))
		})
	}
}

// TestDeterministic compiles each example twice, and again from another
// working directory, and wants byte-identical output.
func TestDeterministic(t *testing.T) {
	specs := examples(t)
	first := map[string][]byte{}
	for _, spec := range specs {
		a, b := stream(t, compileFile(t, spec)), stream(t, compileFile(t, spec))
		if !bytes.Equal(a, b) {
			t.Errorf("%s: two compilations differ", spec)
		}
		first[spec] = a
	}
	abs := map[string]string{}
	for _, spec := range specs {
		p, err := filepath.Abs(spec)
		if err != nil {
			t.Fatal(err)
		}
		abs[spec] = p
	}
	t.Run("other working directory", func(t *testing.T) {
		wd, err := os.Getwd()
		if err != nil {
			t.Fatal(err)
		}
		t.Chdir(t.TempDir())
		for _, spec := range specs {
			rel, err := filepath.Rel(mustWd(t), abs[spec])
			if err != nil {
				t.Fatal(err)
			}
			if got := stream(t, compileFile(t, rel)); !bytes.Equal(got, first[spec]) {
				t.Errorf("%s: output differs when compiled from %s instead of %s", spec, mustWd(t), wd)
			}
		}
	})
}

func mustWd(t *testing.T) string {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return wd
}

// TestOrderAndNames checks DESIGN §3's order and naming on the shop spec of DESIGN.
func TestOrderAndNames(t *testing.T) {
	objs := compileFile(t, "testdata/design.yaml")
	var got []string
	for _, o := range objs {
		got = append(got, o.Ref().String())
	}
	want := []string{
		"Namespace/shop",
		"PersistentVolumeClaim/shop/dataset",
		"Service/shop/web",
		"Deployment/shop/web",
		"JobSet/shop/pretrain",
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("objects:\n got %v\nwant %v", got, want)
	}
	golden.Check(t, "testdata/design.golden", stream(t, objs))
}

// TestPositions checks that compiled objects point at the spec lines that produced them.
func TestPositions(t *testing.T) {
	objs := compileFile(t, "testdata/design.yaml")
	byRef := map[string]*manifest.Object{}
	for _, o := range objs {
		if o.File != "testdata/design.yaml" {
			t.Errorf("%s: File = %q, want the spec file", o.Ref(), o.File)
		}
		byRef[o.Ref().String()] = o
	}
	tests := []struct {
		obj, field string
		line       int
	}{
		{"Deployment/shop/web", "", 13},
		{"Deployment/shop/web", "spec.replicas", 14},
		{"Deployment/shop/web", "spec.template.spec.containers[0]", 16},
		{"Deployment/shop/web", "spec.template.spec.containers[0].securityContext.readOnlyRootFilesystem", 16},
		{"Deployment/shop/web", "spec.template.spec.securityContext.runAsNonRoot", 13},
		{"Deployment/shop/web", "spec.template.spec.initContainers[0].image", 20},
		{"Deployment/shop/web", "spec.template.spec.initContainers[1].startupProbe", 18},
		{"Deployment/shop/web", "spec.template.spec.initContainers[2]", 19},
		{"Deployment/shop/web", "spec.template.spec.containers[0].volumeMounts[0]", 16},
		{"Service/shop/web", "spec.ports[0]", 15},
		{"PersistentVolumeClaim/shop/dataset", "spec.storageClassName", 10},
		{"JobSet/shop/pretrain", "spec.replicatedJobs[0].template.spec.parallelism", 24},
		{"JobSet/shop/pretrain", "spec.replicatedJobs[0].template.spec.template.spec.containers[0].image", 26},
		{"JobSet/shop/pretrain", "spec.replicatedJobs[0].template.spec.template.spec.volumes[1].persistentVolumeClaim.readOnly", 11},
		{"Namespace/shop", "metadata.labels", 7},
	}
	for _, tt := range tests {
		o := byRef[tt.obj]
		if o == nil {
			t.Fatalf("no %s", tt.obj)
		}
		if got := o.Locate(tt.field); got.Line != tt.line || got.Column == 0 {
			t.Errorf("%s %s: at %v, want line %d", tt.obj, tt.field, got, tt.line)
		}
	}
}

// TestBadSpecs: every bad spec is an error naming the right line, and no objects.
func TestBadSpecs(t *testing.T) {
	for _, tt := range badSpecs {
		t.Run(tt.name, func(t *testing.T) {
			objs, perrs := manifest.Parse("bad.yaml", []byte(tt.spec))
			if len(perrs) > 0 {
				t.Fatal(perrs)
			}
			out, err := Compile(objs[0])
			if err == nil {
				t.Fatalf("compiled without error to %d objects", len(out))
			}
			if out != nil {
				t.Errorf("returned objects with an error")
			}
			var me *manifest.Error
			if !errors.As(err, &me) {
				t.Fatalf("error %T is not a *manifest.Error: %v", err, err)
			}
			want := fmt.Sprintf("bad.yaml:%d:", tt.line)
			if !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error:\n%v\nwant %q and %q", err, want, tt.msg)
			}
		})
	}
}

// badSpecs is shared with the CLI tests through testdata: see writeBadSpecs.
var badSpecs = []struct {
	name, spec string
	line       int
	msg        string
}{
	{"unknown field", svcSpec("      replicas: 2\n      replica: 3\n"), 8, `unknown field "replica"`},
	{"unknown top-level field", strings.Replace(svcSpec(""), "spec:\n", "spec:\n  service: {}\n", 1), 5, `unknown field "service" in spec; allowed: namespace, services, target, training, volumes`},
	{"wrong type", svcSpec("      replicas: three\n"), 7, "spec.services.web.replicas: conflicting values"},
	{"unknown volume in mounts", svcSpec("") + "          mounts: {cache: /cache}\n", 10, `mounts names volume "cache", which spec.volumes does not declare`},
	{"nodes: 0", trainSpec("foo", "      nodes: 0\n"), 8, "spec.training.foo.nodes: invalid value 0 (out of bound >=1)"},
	{"duplicate container names", svcSpec("      sidecars:\n        - {name: app, image: envoy}\n"), 10, `container name "app" is already used by spec.services.web.sidecars[0]`},
	{"sidecars with target 1.28", strings.Replace(svcSpec("      sidecars:\n        - {name: proxy, image: envoy}\n"), "spec:\n", "spec:\n  target: {kubernetes: \"1.28\"}\n", 1), 8, "on by default only from Kubernetes 1.29"},
	{"over-long JobSet name", trainSpec(strings.Repeat("x", 55), "      nodes: 16\n"), 6, "pod hostname"},
	{"coordinator endpoint too long", trainSpec(strings.Repeat("y", 26), ""), 6, "coordinator endpoint"},
	{"volume with two kinds", strings.Replace(svcSpec(""), "spec:\n", "spec:\n  volumes:\n    v: {scratch: {}, claim: {name: c}}\n", 1), 6, "exactly one of scratch"},
	{"missing containers", "apiVersion: kiln.dev/v1alpha1\nkind: App\nmetadata: {name: a}\nspec:\n  services:\n    web: {replicas: 1}\n", 6, "spec.services.web.containers is required"},
	{"bad name", strings.Replace(svcSpec(""), "web:", "Web_1:", 1), 6, `invalid name "Web_1" in spec.services`},
	{"parameter servers on pytorch", trainSpec("foo", "      parameterServers: 2\n"), 8, "parameterServers is for framework tensorflow"},
	{"probe without handler", svcSpec("") + "          ready: {periodSeconds: 3}\n", 10, "exactly one of httpGet"},
	{"old jobset target", strings.Replace(trainSpec("foo", ""), "spec:\n", "spec:\n  target: {jobset: v0.5}\n", 1), 5, "target.jobset v0.5 does not know it"},
	{"security without namespace", "apiVersion: kiln.dev/v1alpha1\nkind: App\nmetadata: {name: a}\nspec:\n  namespace: {security: {enforce: restricted}}\n", 5, "metadata.namespace is not set"},
	{"reserved env", trainSpec("foo", "      env: {MASTER_ADDR: x}\n"), 8, "env MASTER_ADDR is set by kiln"},
}

func svcSpec(extra string) string {
	return "apiVersion: kiln.dev/v1alpha1\nkind: App\nmetadata: {name: a, namespace: a}\nspec:\n  services:\n    web:\n" + extra +
		"      containers:\n        - name: app\n          image: nginx\n"
}

func trainSpec(name, extra string) string {
	return "apiVersion: kiln.dev/v1alpha1\nkind: App\nmetadata: {name: a, namespace: a}\nspec:\n  training:\n    " + name + ":\n      framework: pytorch\n" + extra +
		"      image: train\n      command: [python, train.py]\n"
}

func TestIsSpec(t *testing.T) {
	objs, _ := manifest.Parse("x.yaml", []byte("apiVersion: kiln.dev/v1alpha1\nkind: App\nmetadata: {name: a}\n---\napiVersion: v1\nkind: App\nmetadata: {name: b}\n---\napiVersion: kiln.dev/v1alpha1\nkind: Lint\n"))
	got := []bool{IsSpec(objs[0]), IsSpec(objs[1]), IsSpec(objs[2]), IsSpec(nil)}
	if fmt.Sprint(got) != "[true false false false]" {
		t.Errorf("IsSpec = %v", got)
	}
}

// TestFrameworks checks the launch of each framework.
func TestFrameworks(t *testing.T) {
	objs := compileFile(t, "testdata/generic.yaml")
	golden.Check(t, "testdata/generic.golden", stream(t, objs))
	js := objs[0]
	env := js.Lookup("spec.replicatedJobs[0].template.spec.template.spec.containers[0].env")
	if env == nil || len(env.Content) < 4 {
		t.Fatalf("generic: env = %v", env)
	}
	var names []string
	for _, e := range env.Content {
		names = append(names, e.Content[1].Value)
	}
	if got := strings.Join(names[:4], ","); got != "RANK,WORLD_SIZE,COORDINATOR_ADDR,COORDINATOR_PORT" {
		t.Errorf("generic env = %s", got)
	}
}

// TestDefaultsMatchSchema checks that the defaults the Go types fill in are
// the schema's: the CUE export of a minimal spec decodes to the same App as
// the spec itself.
func TestDefaultsMatchSchema(t *testing.T) {
	src := "apiVersion: kiln.dev/v1alpha1\nkind: App\nmetadata: {name: a, namespace: a}\nspec:\n" +
		"  volumes: {d: {shared: {size: 1Gi}}, c: {claim: {name: x}}, s: {scratch: {}}}\n" +
		"  services: {web: {containers: [{name: app, image: x, ready: {httpGet: {port: 80}}}]}}\n" +
		"  training: {t: {framework: pytorch, image: x, command: [x]}}\n"
	objs, _ := manifest.Parse("d.yaml", []byte(src))
	content, err := objs[0].Content()
	if err != nil {
		t.Fatal(err)
	}
	ev, err := getEvaluator()
	if err != nil {
		t.Fatal(err)
	}
	data, err := ev.app.Unify(ev.ctx.Encode(content)).MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	var fromCUE App
	if err := json.Unmarshal(data, &fromCUE); err != nil {
		t.Fatal(err)
	}
	fromGo, err := decode(content)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(&fromCUE, fromGo) {
		a, _ := json.Marshal(fromCUE)
		b, _ := json.Marshal(fromGo)
		t.Errorf("defaults differ:\n CUE %s\n  Go %s", a, b)
	}
	if fromGo.Spec.Services["web"].Replicas != 1 || fromGo.Spec.Training["t"].Port != 29500 || fromGo.Spec.Volumes["d"].Shared.AccessMode != "ReadWriteMany" {
		t.Errorf("defaults not applied: %+v", fromGo.Spec)
	}
}

// TestMetadataCarriesOver: the spec's labels and annotations reach every
// compiled object, except kustomize/kubectl annotations that configure the
// spec document itself; standard labels win over the spec's.
func TestMetadataCarriesOver(t *testing.T) {
	src := `apiVersion: kiln.dev/v1alpha1
kind: App
metadata:
  name: a
  namespace: a
  labels: {team: search, app.kubernetes.io/name: mine}
  annotations:
    kiln.dev/ignore: "psa/runAsUser # reviewed"
    config.kubernetes.io/function: "exec: {path: kiln}"
    config.kubernetes.io/local-config: "true"
spec:
  services:
    web:
      containers: [{name: app, image: x}]
`
	objs, _ := manifest.Parse("m.yaml", []byte(src))
	out, err := Compile(objs[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range out {
		if o.Labels["team"] != "search" || o.Labels[LabelName] != "web" || o.Labels[LabelManagedBy] != ManagedBy {
			t.Errorf("%s labels = %v", o.Ref(), o.Labels)
		}
		if o.Annotations["kiln.dev/ignore"] != "psa/runAsUser # reviewed" || len(o.Annotations) != 1 {
			t.Errorf("%s annotations = %v", o.Ref(), o.Annotations)
		}
	}
}

// TestCompileAll: parallel compilation gives each spec the objects serial
// compilation gives, and the errors of bad specs in spec order (run with
// -race to check the evaluators are not shared).
func TestCompileAll(t *testing.T) {
	var specs []*manifest.Object
	var want [][]byte
	for round := 0; round < 4; round++ {
		for _, p := range examples(t) {
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			objs, _ := manifest.Parse(p, data)
			specs = append(specs, objs[0])
			want = append(want, stream(t, compileFile(t, p)))
		}
		bad, _ := manifest.Parse(fmt.Sprintf("bad-%d.yaml", round), []byte(badSpecs[round].spec))
		specs = append(specs, bad[0])
		want = append(want, nil)
	}
	got, errs := CompileAll(specs)
	for i := range specs {
		if want[i] == nil {
			if got[i] != nil {
				t.Errorf("spec %d: bad spec compiled", i)
			}
			continue
		}
		if !bytes.Equal(stream(t, got[i]), want[i]) {
			t.Errorf("spec %d (%s): parallel output differs from serial", i, specs[i].File)
		}
	}
	if len(errs) != 4 {
		t.Fatalf("errors = %v, want 4", errs)
	}
	for i, err := range errs {
		if !strings.Contains(err.Error(), fmt.Sprintf("bad-%d.yaml:", i)) {
			t.Errorf("error %d = %v, want it from bad-%d.yaml", i, err, i)
		}
	}
}
