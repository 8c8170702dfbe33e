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
var exampleNames = []string{"mesh", "model-server", "psa-migration", "pytorch", "storefront", "tensorflow", "web"}

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

// TestOrderAndNames checks the order and naming of docs/design.md §3 on the shop spec.
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
	{"unknown top-level field", strings.Replace(svcSpec(""), "spec:\n", "spec:\n  service: {}\n", 1), 5, `unknown field "service" in spec; did you mean "services"?; allowed: configs, jobs, namespace, services, target, training, volumes`},
	{"wrong type", svcSpec("      replicas: three\n"), 7, "spec.services.web.replicas must be a whole number"},
	{"unknown volume in mounts", svcSpec("") + "          mounts: {cache: /cache}\n", 10, `mounts names volume "cache", which spec.volumes does not declare`},
	{"nodes: 0", trainSpec("foo", "      nodes: 0\n"), 8, "spec.training.foo.nodes is 0; it must be at least 1"},
	{"duplicate container names", svcSpec("      sidecars:\n        - {name: app, image: envoy}\n"), 10, `container name "app" is already used by spec.services.web.sidecars[0]`},
	{"sidecars with target 1.28", strings.Replace(svcSpec("      sidecars:\n        - {name: proxy, image: envoy}\n"), "spec:\n", "spec:\n  target: {kubernetes: \"1.28\"}\n", 1), 8, "on by default only from Kubernetes 1.29"},
	{"over-long JobSet name", trainSpec(strings.Repeat("x", 46), "      nodes: 16\n"), 6, "at most 57 before the suffix), and \"" + strings.Repeat("x", 46) + "-worker-0-15\" has 58"},
	{"over-long JobSet name by one", trainSpec(strings.Repeat("x", 46), "      nodes: 16\n"), 6, "shorten the key to at most 45 characters"},
	{"training key starts with a digit", trainSpec("7b-pretrain", ""), 6, "DNS-1035 labels, which start with a letter"},
	{"volume with two kinds", strings.Replace(svcSpec(""), "spec:\n", "spec:\n  volumes:\n    v: {scratch: {}, claim: {name: c}}\n", 1), 6, "exactly one of scratch"},
	{"missing containers", "apiVersion: kiln.dev/v1alpha1\nkind: App\nmetadata: {name: a}\nspec:\n  services:\n    web: {replicas: 1}\n", 6, "spec.services.web.containers is required"},
	{"bad name", strings.Replace(svcSpec(""), "web:", "Web_1:", 1), 6, `invalid name "Web_1" in spec.services`},
	{"parameter servers on pytorch", trainSpec("foo", "      parameterServers: 2\n"), 8, "parameterServers is for framework tensorflow"},
	{"probe without handler", svcSpec("") + "          ready: {periodSeconds: 3}\n", 10, "exactly one of httpGet"},
	{"old jobset target", strings.Replace(trainSpec("foo", ""), "spec:\n", "spec:\n  target: {jobset: v0.1}\n", 1), 5, "served from JobSet v0.2; target.jobset is v0.1"},
	{"restartStrategy on old jobset", strings.Replace(trainSpec("foo", "      restartStrategy: BlockingRecreate\n"), "spec:\n", "spec:\n  target: {jobset: v0.6}\n", 1), 9, "JobSet v0.7 added"},
	{"security without namespace", "apiVersion: kiln.dev/v1alpha1\nkind: App\nmetadata: {name: a}\nspec:\n  namespace: {security: {enforce: restricted}}\n", 5, "metadata.namespace is not set"},
	{"reserved env", trainSpec("foo", "      env: {PET_NNODES: x}\n"), 8, "env PET_NNODES is set by kiln"},
	{"replicas as a string", svcSpec("      replicas: \"4\"\n"), 7, "replicas must be a whole number, without quotes"},
	{"level not allowed", "apiVersion: kiln.dev/v1alpha1\nkind: App\nmetadata: {name: a, namespace: a}\nspec:\n  namespace: {security: {enforce: strict}}\n", 5, "enforce must be one of privileged, baseline, restricted"},
	{"level typo", "apiVersion: kiln.dev/v1alpha1\nkind: App\nmetadata: {name: a, namespace: a}\nspec:\n  namespace: {security: {enforce: restrictd}}\n", 5, "(did you mean restricted?)"},
	{"memory in milli units", svcSpec("") + "          resources: {memory: 512m}\n", 10, "512m is 512 thousandths of a byte"},
	{"probe names another container's port", svcSpec("      sidecars:\n        - {name: envoy, image: envoy, ports: {admin: 9901}}\n") + "          ready: {httpGet: {port: admin}}\n", 12, `probe port "admin" is not a port of container "app"`},
	{"config not declared", svcSpec("") + "          env: {LEVEL: {config: app, key: LEVEL}}\n", 10, `config "app" is not in spec.configs`},
	{"config key missing", strings.Replace(svcSpec(""), "spec:\n", "spec:\n  configs: {app: {data: {LEVEL: info}}}\n", 1) + "          files: {/etc/app/x.yaml: {config: app, key: x.yaml}}\n", 11, `config "app" has no key "x.yaml"; its keys: LEVEL`},
	{"config file missing", strings.Replace(svcSpec(""), "spec:\n", "spec:\n  configs: {envoy: {files: {envoy.yaml: envoy/envoy.yaml}}}\n", 1), 5, "cannot read config file"},
	{"config file outside", strings.Replace(svcSpec(""), "spec:\n", "spec:\n  configs: {envoy: {files: {passwd: ../../etc/passwd}}}\n", 1), 5, "leaves the spec's directory"},
	{"env ref with both", svcSpec("") + "          env: {X: {config: a, secret: b, key: k}}\n", 10, "names both a config and a secret"},
	{"torchrun -c", strings.Replace(trainSpec("foo", ""), "[python, train.py]", "[python, -c, 'import train']", 1), 9, "not -c code"},
	{"TF_CONFIG too big", strings.Replace(trainSpec("foo", "      nodes: 5000\n      parameterServers: 2\n"), "pytorch", "tensorflow", 1), 8, "Linux refuses to start a process with an environment variable over 131072 bytes"},
	{"service name with a digit before 1.36", strings.Replace(strings.Replace(svcSpec("      ports: {http: 80}\n"), "web:", "2048-game:", 1), "spec:\n", "spec:\n  target: {kubernetes: \"1.35\"}\n", 1), 7, "before Kubernetes 1.36 Service names must start with a letter"},
	{"pod label kiln sets", svcSpec("      pod: {labels: {app.kubernetes.io/name: x}}\n"), 7, "label app.kubernetes.io/name is set by kiln"},
	{"affinity field typo", svcSpec("      pod: {affinity: {nodeAfinity: {}}}\n"), 7, `unknown field "nodeAfinity"`},
	{"toleration Exists with value", svcSpec("      pod: {tolerations: [{key: gpu, operator: Exists, value: x}]}\n"), 7, "operator Exists matches any value"},
	{"elastic tensorflow", strings.Replace(trainSpec("foo", "      nodes: \"2:4\"\n"), "pytorch", "tensorflow", 1), 8, "MIN:MAX (elastic training) is for framework pytorch"},
	{"config hash annotation", svcSpec("      pod: {annotations: {kiln.dev/config-hash: x}}\n"), 7, "annotation kiln.dev/config-hash is set by kiln"},
	{"replicas and autoscale", svcSpec("      replicas: 3\n      autoscale: {max: 5, cpu: 70}\n") + "          resources: {cpu: 100m}\n", 7, "replicas and autoscale are both set: the HorizontalPodAutoscaler owns the replica count"},
	{"autoscale without target", svcSpec("      autoscale: {max: 5}\n"), 7, "autoscale needs a target: cpu or memory"},
	{"autoscale min above max", svcSpec("      autoscale: {min: 6, max: 5, cpu: 70}\n") + "          resources: {cpu: 100m}\n", 7, "autoscale.min 6 is above autoscale.max 5"},
	{"autoscale cpu without request", svcSpec("      autoscale: {max: 5, cpu: 70}\n"), 7, `autoscale.cpu is a percent of the cpu request, and container "app" requests none`},
	{"PDB never allows an eviction", svcSpec("      replicas: 2\n      disruption: {minAvailable: 2}\n"), 8, "disruption.minAvailable 2 never allows an eviction: replicas is 2, so every pod must stay up"},
	{"PDB of 100%", svcSpec("      disruption: {minAvailable: \"100%\"}\n"), 7, "keep minAvailable below the replica count (at most 0)"},
	{"PDB maxUnavailable 0", svcSpec("      replicas: 2\n      disruption: {maxUnavailable: 0}\n"), 8, "disruption.maxUnavailable 0 never allows an eviction"},
	{"PDB with both", svcSpec("      disruption: {minAvailable: 1, maxUnavailable: 1}\n"), 7, "exactly one of minAvailable or maxUnavailable"},
	{"PDB percent typo", svcSpec("      disruption: {minAvailable: 50 %}\n"), 7, `spec.services.web.disruption.minAvailable: invalid value "50 %"; want a whole number or a percentage such as "25%"`},
	{"envFrom with both", svcSpec("") + "          envFrom: [{config: a, secret: b}]\n", 10, "envFrom needs exactly one of config or secret"},
	{"envFrom unknown config", strings.Replace(svcSpec(""), "spec:\n", "spec:\n  configs: {app: {data: {LEVEL: info}}}\n", 1) + "          envFrom: [{config: ap}]\n", 11, `config "ap" is not in spec.configs; did you mean "app"?`},
	{"envFrom key not an env name", strings.Replace(svcSpec(""), "spec:\n", "spec:\n  configs: {app: {data: {1st: x}}}\n", 1) + "          envFrom: [{config: app}]\n", 11, `key "1st" does not make an env variable name`},
	{"envFrom bad prefix", svcSpec("") + "          envFrom: [{secret: db, prefix: \"DB PASS\"}]\n", 10, `envFrom[0].prefix: invalid value "DB PASS"; want the start of an env name`},
	{"job with a service's name", strings.Replace(svcSpec(""), "spec:\n", "spec:\n  jobs: {web: {schedule: \"@daily\", containers: [{name: a, image: b}]}}\n", 1), 5, `job "web" has the name of service "web"`},
	{"bad cron schedule", jobSpec("nightly", "      schedule: \"0 3 * *\"\n"), 7, `schedule "0 3 * *" is not a cron schedule (expected exactly 5 fields, found 4: [0 3 * *]); write five fields`},
	{"cron with TZ", jobSpec("nightly", "      schedule: \"CRON_TZ=UTC 0 3 * * *\"\n"), 7, "set timeZone instead"},
	{"bad time zone", jobSpec("nightly", "      schedule: \"@daily\"\n      timeZone: Europe/Berln\n"), 8, `timeZone "Europe/Berln" is not an IANA time zone name`},
	{"concurrency without schedule", jobSpec("once", "      concurrency: Replace\n"), 7, `concurrency is for a scheduled job, and job "once" has no schedule`},
	{"concurrency typo", jobSpec("once", "      concurrency: forbid\n"), 7, "concurrency must be one of Forbid, Allow, Replace (did you mean Forbid?)"},
	{"long CronJob name", jobSpec(strings.Repeat("n", 53), "      schedule: \"@daily\"\n"), 6, "may have at most 52 characters"},
	{"route without ports", svcSpec("      routes: {public: {host: shop.example.com}}\n"), 7, `service "web" declares no ports`},
	{"route without a gateway", svcSpec("      ports: {http: 8080}\n      routes: {public: {host: shop.example.com}}\n"), 8, "name it in target.gateway"},
	{"route port unknown", routeSpec("{host: shop.example.com, port: admin}"), 10, `port "admin" is not a port of service "web"; its ports: http`},
	{"route tls with a gateway", routeSpec("{host: shop.example.com, tls: {secret: shop-tls}}"), 10, "with a Gateway, TLS is the Gateway listener's certificate"},
	{"route path with //", routeSpec("{host: shop.example.com, paths: [/api//v1]}"), 10, `path "/api//v1" contains "//"`},
	{"route host an IP", routeSpec("{host: 10.0.0.1}"), 10, "host 10.0.0.1 is an IP address"},
	{"route host uppercase", routeSpec("{host: Shop.example.com}"), 10, `host: invalid value "Shop.example.com"; want a hostname`},
	{"route path relative", routeSpec("{host: shop.example.com, paths: [api]}"), 10, `invalid value "api"; want an absolute URL path`},
	{"route name clash", "apiVersion: kiln.dev/v1alpha1\nkind: App\nmetadata: {name: a, namespace: a}\nspec:\n  target: {gateway: {name: public}}\n  services:\n    a:\n      ports: {http: 80}\n      routes: {b-c: {host: a.example.com}}\n      containers: [{name: app, image: nginx}]\n    a-b:\n      ports: {http: 80}\n      routes: {c: {host: b.example.com}}\n      containers: [{name: app, image: nginx}]\n", 13, `route "c" of service "a-b" compiles to an object named "a-b-c", as spec.services.a.routes.b-c does`},
	{"allowFrom an unknown service", svcSpec("      ports: {http: 80}\n      network: {allowFrom: [{service: wbe}]}\n"), 8, `service "wbe" is not in spec.services; did you mean "web"?`},
	{"allowFrom without ports", svcSpec("      network: {allowFrom: [{service: web}]}\n"), 7, `allowFrom lets peers reach the service's ports, and service "web" declares none`},
	{"peer with two kinds", svcSpec("      ports: {http: 80}\n      network: {allowFrom: [{service: web, namespaces: {team: a}}]}\n"), 8, "a peer is exactly one of"},
	{"egress bad cidr", svcSpec("      network: {egress: [{cidr: 10.0.0.0/33}]}\n"), 7, `cidr "10.0.0.0/33" is not an IP block`},
	{"egress except outside", svcSpec("      network: {egress: [{cidr: 10.0.0.0/16, except: [10.1.0.0/24]}]}\n"), 7, "except 10.1.0.0/24 is not a smaller block inside cidr 10.0.0.0/16"},
	{"egress bad port", svcSpec("      network: {egress: [{cidr: 0.0.0.0/0, ports: [0]}]}\n"), 7, "ports[0]"},
	{"gpus in training resources", trainSpec("foo", "      resources: {gpus: 2}\n"), 8, `unknown field "gpus" in spec.training.foo.resources; allowed: cpu, gpuResource, memory`},
	{"gpu resource without vendor", svcSpec("") + "          resources: {gpus: 1, gpuResource: gpu}\n", 10, `gpuResource: invalid value "gpu"; want a vendor's resource name, e.g. nvidia.com/gpu`},
	{"shm in milli units", svcSpec("      shm: 1m\n"), 7, "1m is 1 thousandths of a byte"},
	{"gpu pool toleration", strings.Replace(svcSpec(""), "spec:\n", "spec:\n  target: {gpuPool: {tolerations: [{key: gpu, operator: Exists, value: x}]}}\n", 1), 5, "operator Exists matches any value"},
	{"negative gpus", svcSpec("") + "          resources: {gpus: -1}\n", 10, "spec.services.web.containers[0].resources.gpus is -1; it must be at least 0"},
	{"autoscale cpu over 1000", svcSpec("      autoscale: {max: 3, cpu: 5000}\n"), 7, "spec.services.web.autoscale.cpu is 5000; it must be at most 1000"},
	{"header typo", strings.Replace(svcSpec(""), "kiln.dev/v1alpha1", "kiln.dev/v1alpha2", 1), 1, `apiVersion "kiln.dev/v1alpha2" is not an App spec version kiln knows`},
}

func svcSpec(extra string) string {
	return "apiVersion: kiln.dev/v1alpha1\nkind: App\nmetadata: {name: a, namespace: a}\nspec:\n  services:\n    web:\n" + extra +
		"      containers:\n        - name: app\n          image: nginx\n"
}

func routeSpec(route string) string {
	return strings.Replace(svcSpec("      ports: {http: 8080}\n      routes:\n        public: "+route+"\n"), "spec:\n", "spec:\n  target: {gateway: {name: public, namespace: gateways}}\n", 1)
}

func jobSpec(name, extra string) string {
	return "apiVersion: kiln.dev/v1alpha1\nkind: App\nmetadata: {name: a, namespace: a}\nspec:\n  jobs:\n    " + name + ":\n" + extra +
		"      containers:\n        - name: app\n          image: nginx\n"
}

func trainSpec(name, extra string) string {
	return "apiVersion: kiln.dev/v1alpha1\nkind: App\nmetadata: {name: a, namespace: a}\nspec:\n  training:\n    " + name + ":\n      framework: pytorch\n" + extra +
		"      image: train\n      command: [python, train.py]\n"
}

func TestIsSpec(t *testing.T) {
	objs, _ := manifest.Parse("x.yaml", []byte("apiVersion: kiln.dev/v1alpha1\nkind: App\nmetadata: {name: a}\n---\napiVersion: v1\nkind: App\nmetadata: {name: b}\n---\napiVersion: kiln.dev/v1alpha1\nkind: Lint\n"))
	got := []bool{IsSpec(objs[0]), IsSpec(objs[1]), IsSpec(objs[2]), IsSpec(nil)}
	// apiVersion v1 kind App is a near miss (no group): refused as a bad spec,
	// not passed through; kind Lint is kiln fn's config, not a spec.
	if fmt.Sprint(got) != "[true true false false]" {
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
		"  services: {web: {pod: {topologySpread: [{topologyKey: zone}]}, containers: [{name: app, image: x, ready: {httpGet: {port: 80}}}]}}\n" +
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

// TestJobSetNameLimit: a key of exactly the longest length the JobSet
// webhook accepts compiles, one more character does not.
func TestJobSetNameLimit(t *testing.T) {
	for _, tt := range []struct {
		key   string
		nodes int
		ok    bool
	}{
		{strings.Repeat("x", 45), 16, true}, // x…x-worker-0-15: 57
		{strings.Repeat("x", 46), 16, false},
		{strings.Repeat("x", 46), 1, true}, // x…x-worker-0-0: 57
		{strings.Repeat("x", 47), 1, false},
	} {
		objs, _ := manifest.Parse("n.yaml", []byte(strings.Replace(trainSpec(tt.key, ""), "framework: pytorch\n", fmt.Sprintf("framework: pytorch\n      nodes: %d\n", tt.nodes), 1)))
		_, err := Compile(objs[0])
		if (err == nil) != tt.ok {
			t.Errorf("key of %d characters, %d nodes: err = %v, want ok=%v", len(tt.key), tt.nodes, err, tt.ok)
		}
	}
}

// TestTorchLaunch: the user's command is kept, or run under torchrun.
func TestTorchLaunch(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"python train.py --lr 1", "python -m torch.distributed.run train.py --lr 1"},
		{"/opt/conda/bin/python train.py", "/opt/conda/bin/python -m torch.distributed.run train.py"},
		{"python3.11 -m train", "python3.11 -m torch.distributed.run -m train"},
		{"python -u train.py", "python -u -m torch.distributed.run train.py"},
		{"python -W ignore -m train", "python -W ignore -m torch.distributed.run -m train"},
		{"python -m torch.distributed.run --nnodes 2 train.py", "python -m torch.distributed.run --nnodes 2 train.py"},
		{"torchrun --max-restarts 3 train.py", "torchrun --max-restarts 3 train.py"},
		{"/app/train.py", "torchrun /app/train.py"},
		{"bash -c torchrun train.py", "bash -c torchrun train.py"},
		{"accelerate launch train.py", "accelerate launch train.py"},
		{"python -c x", "error"},
		{"python -u", "error"},
	} {
		got, err := torchLaunch(strings.Fields(tt.in))
		s := strings.Join(got, " ")
		if err != nil {
			s = "error"
		}
		if s != tt.want {
			t.Errorf("%s → %s, want %s", tt.in, s, tt.want)
		}
	}
}

// TestTFConfigLimit: the largest worker count the error suggests fits, one more does not.
func TestTFConfigLimit(t *testing.T) {
	tr := &Training{Framework: "tensorflow", Nodes: Nodes{100000, 100000, false}, ParameterServers: 4, Port: 2222}
	max := maxTFWorkers("tf", tr)
	if max < 1000 || max > 10000 {
		t.Fatalf("max workers %d is implausible", max)
	}
	for n, fits := range map[int]bool{max: true, max + 1: false} {
		u := *tr
		u.Nodes = Nodes{n, n, false}
		worst := 0
		for _, rj := range roleJobs("tf", &u) {
			worst = max2(worst, tfConfigBytes("tf", &u, rj.name, rj.pods))
		}
		if (worst <= maxEnvBytes) != fits {
			t.Errorf("%d workers: TF_CONFIG %d bytes, want fits=%v", n, worst, fits)
		}
	}
}

func max2(a, b int) int {
	if a > b {
		return a
	}
	return b
}

// TestTorchrunWarning: a pytorch command that does not start torchrun is a
// warning naming what to write instead; one that does (or that kiln wires,
// or a single process that needs no torchrun) is not.
func TestTorchrunWarning(t *testing.T) {
	for _, tt := range []struct {
		name, extra, command string
		want                 string // "" for no warning
	}{
		{"wrapper", "      nodes: 4\n      gpusPerNode: 8\n", "[uv, run, finetune.py]", "write [uv, run, torchrun, finetune.py]"},
		{"wrapper of python", "      nodes: 2\n", "[uv, run, python, -u, train.py]", "write [uv, run, python, -u, -m, torch.distributed.run, train.py]"},
		{"shell script", "      nodes: 2\n", `[sh, -c, "pip install -r req.txt && python -u train.py --lr 1"]`, `in the script, write "torchrun train.py" instead of "python -u train.py"`},
		{"shell module", "      nodes: 2\n", `[bash, -ec, "python -m pip install x; python3 -m train"]`, `write "torchrun -m train" instead of "python3 -m train"`},
		{"another launcher", "      nodes: 2\n", "[accelerate, launch, --mixed_precision, bf16, train.py, --lr, '1']", "write [torchrun, train.py, --lr, 1] (accelerate's own flags do not carry over)"},
		{"opaque script", "      nodes: 2\n", "[./run.sh]", "start torchrun in it"},
		{"says what happens", "      nodes: 3\n", "[./run.sh]", "PET_NNODES=3, PET_NPROC_PER_NODE=1, …), which only torchrun reads, so the 3 pods would each train alone"},
		{"one node, several GPUs", "      gpusPerNode: 4\n", "[uv, run, x.py]", "the pod would run one process, not one per GPU (4)"},
		{"shell starts torchrun", "      nodes: 2\n", `[bash, -c, "cd /app && exec torchrun train.py"]`, ""},
		{"wrapper of torchrun", "      nodes: 2\n", "[uv, run, torchrun, x.py]", ""},
		{"torchrun in args", "      nodes: 2\n      args: [\"torchrun x.py\"]\n", "[bash, -c]", ""},
		{"kiln wires python", "      nodes: 2\n", "[python, train.py]", ""},
		{"kiln wires a script", "      nodes: 2\n", "[/app/train.py]", ""},
		{"one process needs no torchrun", "      gpusPerNode: 1\n", "[uv, run, x.py]", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			src := strings.Replace(trainSpec("foo", tt.extra), "[python, train.py]", tt.command, 1)
			src = strings.Replace(src, "pytorch\n", "pytorch\n      security: {runAsUser: 1000}\n", 1)
			objs, errs := manifest.Parse("w.yaml", []byte(src))
			if len(errs) > 0 {
				t.Fatal(errs)
			}
			_, warns, err := CompileWarn(objs[0])
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, w := range warns {
				got = append(got, w.Error())
			}
			switch {
			case tt.want == "" && len(got) > 0:
				t.Errorf("warnings %q, want none", got)
			case tt.want != "" && (len(got) != 1 || !strings.Contains(got[0], tt.want) || !strings.Contains(got[0], "w.yaml:")):
				t.Errorf("warnings %q, want one at the command containing %q", got, tt.want)
			}
		})
	}
}

// TestConfigHash: a Deployment whose pods read a compiled config (env or
// files) carries a hash of that config's content in its pod template, so a
// change in a config file rolls the pods; configs its pods do not read, and
// JobSets (whose templates the JobSet webhook will not change), get none.
func TestConfigHash(t *testing.T) {
	const spec = `apiVersion: kiln.dev/v1alpha1
kind: App
metadata: {name: a, namespace: a}
spec:
  configs:
    app: {data: {LEVEL: info}}
    envoy: {files: {envoy.yaml: envoy.yaml}}
    other: {data: {X: "1"}}
  services:
    env:
      containers: [{name: app, image: x, env: {LEVEL: {config: app, key: LEVEL}}}]
    file:
      pod: {annotations: {team: t}}
      sidecars: [{name: envoy, image: envoy, files: {/etc/envoy/envoy.yaml: {config: envoy, key: envoy.yaml}}}]
      containers: [{name: app, image: x}]
    none:
      containers: [{name: app, image: x}]
  training:
    job:
      framework: generic
      image: x
      command: [run]
      files: {/etc/app: {config: app}}
`
	dir := t.TempDir()
	build := func(envoy, data string) map[string]string {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, "envoy.yaml"), []byte(envoy), 0o644); err != nil {
			t.Fatal(err)
		}
		src := strings.Replace(spec, "LEVEL: info", "LEVEL: "+data, 1)
		objs, errs := manifest.Parse(filepath.Join(dir, "app.yaml"), []byte(src))
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		out, err := Compile(objs[0])
		if err != nil {
			t.Fatal(err)
		}
		hashes := map[string]string{}
		for _, o := range out {
			for _, path := range []string{"spec.template.metadata.annotations", "spec.replicatedJobs[0].template.spec.template.metadata.annotations"} {
				if n := o.Lookup(path); n != nil {
					for i := 0; i+1 < len(n.Content); i += 2 {
						if n.Content[i].Value == ConfigHashAnnotation {
							hashes[o.Kind+"/"+o.Name] = n.Content[i+1].Value
						}
					}
				}
			}
		}
		return hashes
	}
	base := build("admin: {}\n", "info")
	if len(base) != 2 || len(base["Deployment/env"]) != 64 || len(base["Deployment/file"]) != 64 {
		t.Fatalf("hashes %v: want a SHA-256 on Deployments env and file only", base)
	}
	if base["Deployment/env"] == base["Deployment/file"] {
		t.Errorf("two templates reading different configs have the same hash %s", base["Deployment/env"])
	}
	if again := build("admin: {}\n", "info"); fmt.Sprint(again) != fmt.Sprint(base) {
		t.Errorf("same configs, hashes %v then %v", base, again)
	}
	fileEdit := build("admin: {port: 9901}\n", "info")
	if fileEdit["Deployment/file"] == base["Deployment/file"] || fileEdit["Deployment/env"] != base["Deployment/env"] {
		t.Errorf("after editing envoy.yaml: %v, before %v; want only Deployment/file to change", fileEdit, base)
	}
	dataEdit := build("admin: {}\n", "debug")
	if dataEdit["Deployment/env"] == base["Deployment/env"] || dataEdit["Deployment/file"] != base["Deployment/file"] {
		t.Errorf("after editing configs.app.data: %v, before %v; want only Deployment/env to change", dataEdit, base)
	}
}

// TestJobs: a job's sidecars are native sidecars (initContainers with
// restartPolicy Always in a pod of restartPolicy Never), which the kubelet
// stops once the containers end, so the Job completes; a scheduled job's
// runs read the configs' current content (config hash in the CronJob's
// template), a one-off Job's immutable template has no hash.
func TestJobs(t *testing.T) {
	src := `apiVersion: kiln.dev/v1alpha1
kind: App
metadata: {name: a, namespace: a}
spec:
  configs: {report: {data: {LEVEL: info}}}
  jobs:
    nightly:
      schedule: "0 3 * * *"
      timeZone: Europe/Berlin
      ttlAfterFinished: 1h
      sidecars: [{name: proxy, image: proxy}]
      containers: [{name: report, image: report, envFrom: [{config: report}]}]
    migrate:
      backoff: 2
      ttlAfterFinished: 10m
      sidecars: [{name: proxy, image: proxy}]
      containers: [{name: migrate, image: migrate, envFrom: [{config: report}]}]
`
	objs, errs := manifest.Parse("jobs.yaml", []byte(src))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	out, err := Compile(objs[0])
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]*manifest.Object{}
	for _, o := range out {
		kinds[o.Kind] = o
	}
	job, cron := kinds["Job"], kinds["CronJob"]
	if job == nil || cron == nil || job.Name != "migrate" || cron.Name != "nightly" {
		t.Fatalf("want Job migrate and CronJob nightly, got %v", kinds)
	}
	for _, tt := range []struct {
		o        *manifest.Object
		pod      string
		wantHash bool
	}{{job, "spec.template", false}, {cron, "spec.jobTemplate.spec.template", true}} {
		if got := value(tt.o, tt.pod+".spec.restartPolicy"); got != "Never" {
			t.Errorf("%s: restartPolicy %q, want Never", tt.o.Kind, got)
		}
		if got := value(tt.o, tt.pod+".spec.initContainers[0].restartPolicy"); got != "Always" {
			t.Errorf("%s: the sidecar's restartPolicy %q, want Always (a native sidecar)", tt.o.Kind, got)
		}
		if hash := tt.o.Lookup(tt.pod + ".metadata.annotations"); (hash != nil) != tt.wantHash {
			t.Errorf("%s: config hash annotation present %v, want %v", tt.o.Kind, hash != nil, tt.wantHash)
		}
	}
	for field, want := range map[string]string{"spec.backoffLimit": "2", "spec.ttlSecondsAfterFinished": "600"} {
		if got := value(job, field); got != want {
			t.Errorf("Job %s = %q, want %s", field, got, want)
		}
	}
	for field, want := range map[string]string{"spec.schedule": "0 3 * * *", "spec.timeZone": "Europe/Berlin", "spec.concurrencyPolicy": "Forbid", "spec.jobTemplate.spec.ttlSecondsAfterFinished": "3600"} {
		if got := value(cron, field); got != want {
			t.Errorf("CronJob %s = %q, want %s", field, got, want)
		}
	}
}

func value(o *manifest.Object, field string) string {
	if n := o.Lookup(field); n != nil {
		return n.Value
	}
	return ""
}

// TestNetworkPolicy: a service with network gets a policy of both types
// over its own pods that lets in only its peers, on its ports, and lets
// out DNS, the spec's services on their ports and the egress given.
func TestNetworkPolicy(t *testing.T) {
	src := `apiVersion: kiln.dev/v1alpha1
kind: App
metadata: {name: a, namespace: a}
spec:
  services:
    web:
      ports: {http: 8080}
      network:
        allowFrom: [{service: api}, {namespaces: {kubernetes.io/metadata.name: gateways}}]
        egress: [{cidr: 10.20.0.0/16, ports: [5432]}]
      containers: [{name: app, image: nginx}]
    api:
      ports: {grpc: 9090}
      containers: [{name: app, image: api}]
`
	objs, errs := manifest.Parse("net.yaml", []byte(src))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	out, err := Compile(objs[0])
	if err != nil {
		t.Fatal(err)
	}
	var np *manifest.Object
	for _, o := range out {
		if o.Kind == "NetworkPolicy" {
			if np != nil {
				t.Fatalf("two NetworkPolicies: only web has network")
			}
			np = o
		}
	}
	if np == nil || np.Name != "web" {
		t.Fatalf("no NetworkPolicy web in %d objects", len(out))
	}
	for field, want := range map[string]string{
		"spec.podSelector.matchLabels[\"app.kubernetes.io/name\"]": "web",
		"spec.policyTypes[1]": "Egress",
		"spec.ingress[0].from[0].podSelector.matchLabels[\"app.kubernetes.io/name\"]":            "api",
		"spec.ingress[0].from[1].namespaceSelector.matchLabels[\"kubernetes.io/metadata.name\"]": "gateways",
		"spec.ingress[0].ports[0].port":                                            "8080",
		"spec.egress[0].to[0].podSelector.matchLabels.k8s-app":                     "kube-dns",
		"spec.egress[0].ports[0].protocol":                                         "UDP",
		"spec.egress[1].to[0].podSelector.matchLabels[\"app.kubernetes.io/name\"]": "api",
		"spec.egress[1].ports[0].port":                                             "9090",
		"spec.egress[2].to[0].podSelector.matchLabels[\"app.kubernetes.io/name\"]": "web",
		"spec.egress[3].to[0].ipBlock.cidr":                                        "10.20.0.0/16",
		"spec.egress[3].ports[0].port":                                             "5432",
	} {
		if got := value(np, field); got != want {
			t.Errorf("%s = %q, want %q", field, got, want)
		}
	}
	if n := np.Lookup("spec.egress"); n == nil || len(n.Content) != 4 {
		t.Errorf("egress: want DNS, api, web and the CIDR")
	}
}

// TestGPUPool: target.gpuPool's scheduling goes on the pods that request
// GPUs only, before the pod's own (whose nodeSelector keys win).
func TestGPUPool(t *testing.T) {
	src := `apiVersion: kiln.dev/v1alpha1
kind: App
metadata: {name: a, namespace: a}
spec:
  target:
    gpuPool:
      nodeSelector: {pool: gpu, zone: a}
      tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
  services:
    model:
      shm: 2Gi
      pod: {nodeSelector: {zone: b}, tolerations: [{key: spot, operator: Exists}]}
      containers: [{name: server, image: vllm, resources: {gpus: 2, gpuResource: amd.com/gpu}}]
    web:
      containers: [{name: app, image: nginx}]
`
	objs, errs := manifest.Parse("gpu.yaml", []byte(src))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	out, err := Compile(objs[0])
	if err != nil {
		t.Fatal(err)
	}
	deps := map[string]*manifest.Object{}
	for _, o := range out {
		if o.Kind == "Deployment" {
			deps[o.Name] = o
		}
	}
	pod := "spec.template.spec."
	for field, want := range map[string]string{
		"nodeSelector.pool":                             "gpu",
		"nodeSelector.zone":                             "b",
		"tolerations[0].key":                            "nvidia.com/gpu",
		"tolerations[1].key":                            "spot",
		`containers[0].resources.limits["amd.com/gpu"]`: "2",
		"volumes[0].name":                               "shm",
		"volumes[0].emptyDir.medium":                    "Memory",
		"volumes[0].emptyDir.sizeLimit":                 "2Gi",
	} {
		if got := value(deps["model"], pod+field); got != want {
			t.Errorf("model %s = %q, want %q", field, got, want)
		}
	}
	for _, field := range []string{"nodeSelector", "tolerations"} {
		if deps["web"].Lookup(pod+field) != nil {
			t.Errorf("web requests no GPUs and got the pool's %s", field)
		}
	}
}
