package psa

import (
	"fmt"
	"github.com/kilnhq/kiln/admit"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules"
)

// restrictedPod is a Deployment that passes the restricted profile; tests
// splice one change into it with strings.Replace.
const restrictedDeployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
spec:
  template:
    spec:
      securityContext:
        runAsNonRoot: true
        seccompProfile:
          type: RuntimeDefault
      containers:
      - name: app
        image: registry.example/app:1.0
        securityContext:
          allowPrivilegeEscalation: false
          capabilities:
            drop: [ALL]
`

// privilegedProbe adds a privileged flag (baseline) and a probe host (baseline since v1.34).
func privilegedProbe(s string) string {
	return strings.Replace(s, "          allowPrivilegeEscalation: false\n",
		"          allowPrivilegeEscalation: false\n          privileged: true\n", 1) +
		"        livenessProbe:\n          httpGet: {host: 10.0.0.1, port: 8080}\n"
}

// withoutRunAsNonRoot removes runAsNonRoot (a restricted-only failure).
func withoutRunAsNonRoot(s string) string {
	return strings.Replace(s, "        runAsNonRoot: true\n", "", 1)
}

func namespace(labels ...string) string {
	s := "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: shop\n"
	if len(labels) > 0 {
		s += "  labels:\n"
		for _, l := range labels {
			s += "    " + l + "\n"
		}
	}
	return s + "---\n"
}

func TestLevels(t *testing.T) {
	workload := withoutRunAsNonRoot(privilegedProbe(restrictedDeployment))
	tests := []struct {
		name string
		src  string
		opts func(*rules.Options)
		want string
	}{
		{
			name: "enforce restricted: errors",
			src:  namespace("pod-security.kubernetes.io/enforce: restricted") + workload,
			want: `22:9 error psa/runAsNonRoot spec.template.spec.containers[0].securityContext.runAsNonRoot: runAsNonRoot != true (pod or container "app" must set securityContext.runAsNonRoot=true)
24:11 error psa/privileged spec.template.spec.containers[0].securityContext.privileged: privileged (container "app" must not set securityContext.privileged=true)
28:21 error psa/hostProbesAndHostLifecycle spec.template.spec.containers[0].livenessProbe.httpGet.host: probe or lifecycle host (container "app" uses probe or lifecycle host "10.0.0.1")
`,
		},
		{
			name: "warn restricted: warnings",
			src:  namespace("pod-security.kubernetes.io/warn: restricted") + workload,
			want: `22:9 warning psa/runAsNonRoot spec.template.spec.containers[0].securityContext.runAsNonRoot: runAsNonRoot != true (pod or container "app" must set securityContext.runAsNonRoot=true)
24:11 warning psa/privileged spec.template.spec.containers[0].securityContext.privileged: privileged (container "app" must not set securityContext.privileged=true)
28:21 warning psa/hostProbesAndHostLifecycle spec.template.spec.containers[0].livenessProbe.httpGet.host: probe or lifecycle host (container "app" uses probe or lifecycle host "10.0.0.1")
`,
		},
		{
			name: "audit restricted: warnings",
			src:  namespace("pod-security.kubernetes.io/audit: restricted") + withoutRunAsNonRoot(restrictedDeployment),
			want: `22:9 warning psa/runAsNonRoot spec.template.spec.containers[0].securityContext.runAsNonRoot: runAsNonRoot != true (pod or container "app" must set securityContext.runAsNonRoot=true)
`,
		},
		{
			name: "enforce baseline, warn restricted: the higher severity wins per check",
			src:  namespace("pod-security.kubernetes.io/enforce: baseline", "pod-security.kubernetes.io/warn: restricted") + workload,
			want: `23:9 warning psa/runAsNonRoot spec.template.spec.containers[0].securityContext.runAsNonRoot: runAsNonRoot != true (pod or container "app" must set securityContext.runAsNonRoot=true)
25:11 error psa/privileged spec.template.spec.containers[0].securityContext.privileged: privileged (container "app" must not set securityContext.privileged=true)
29:21 error psa/hostProbesAndHostLifecycle spec.template.spec.containers[0].livenessProbe.httpGet.host: probe or lifecycle host (container "app" uses probe or lifecycle host "10.0.0.1")
`,
		},
		{
			name: "enforce at an old version: checks added later do not apply",
			src:  namespace("pod-security.kubernetes.io/enforce: baseline", "pod-security.kubernetes.io/enforce-version: v1.30") + workload,
			want: `25:11 error psa/privileged spec.template.spec.containers[0].securityContext.privileged: privileged (container "app" must not set securityContext.privileged=true)
`,
		},
		{
			name: "enforce latest",
			src:  namespace("pod-security.kubernetes.io/enforce: baseline", "pod-security.kubernetes.io/enforce-version: latest") + workload,
			want: `25:11 error psa/privileged spec.template.spec.containers[0].securityContext.privileged: privileged (container "app" must not set securityContext.privileged=true)
29:21 error psa/hostProbesAndHostLifecycle spec.template.spec.containers[0].livenessProbe.httpGet.host: probe or lifecycle host (container "app" uses probe or lifecycle host "10.0.0.1")
`,
		},
		{
			// warn inherits the enforce level and version; an explicit warn-version keeps its own version.
			name: "warn inherits enforce, with its own version",
			src: namespace("pod-security.kubernetes.io/enforce: baseline", "pod-security.kubernetes.io/enforce-version: v1.30",
				"pod-security.kubernetes.io/warn-version: latest") + workload,
			want: `26:11 error psa/privileged spec.template.spec.containers[0].securityContext.privileged: privileged (container "app" must not set securityContext.privileged=true)
30:21 warning psa/hostProbesAndHostLifecycle spec.template.spec.containers[0].livenessProbe.httpGet.host: probe or lifecycle host (container "app" uses probe or lifecycle host "10.0.0.1")
`,
		},
		{
			name: "invalid enforce level: reported, then enforced as restricted",
			src:  namespace("pod-security.kubernetes.io/enforce: strict") + withoutRunAsNonRoot(restrictedDeployment),
			want: `6:5 error psa/invalid-label metadata.labels["pod-security.kubernetes.io/enforce"]: label pod-security.kubernetes.io/enforce has invalid value "strict": must be one of privileged, baseline, restricted; the API server refuses the Namespace (Pod Security admission validates these labels on create and update; one that already carries it is evaluated with enforce as restricted)
22:9 error psa/runAsNonRoot spec.template.spec.containers[0].securityContext.runAsNonRoot: runAsNonRoot != true (pod or container "app" must set securityContext.runAsNonRoot=true)
`,
		},
		{
			name: "invalid warn level: reported, then warn is off",
			src:  namespace("pod-security.kubernetes.io/warn: loud") + workload,
			want: `6:5 error psa/invalid-label metadata.labels["pod-security.kubernetes.io/warn"]: label pod-security.kubernetes.io/warn has invalid value "loud": must be one of privileged, baseline, restricted; the API server refuses the Namespace (Pod Security admission validates these labels on create and update; one that already carries it is evaluated with warn as privileged (not at all))
`,
		},
		{
			name: "invalid version: reported, then latest",
			src:  namespace("pod-security.kubernetes.io/enforce: baseline", "pod-security.kubernetes.io/enforce-version: \"1.30\"") + workload,
			want: `7:5 error psa/invalid-label metadata.labels["pod-security.kubernetes.io/enforce-version"]: label pod-security.kubernetes.io/enforce-version has invalid value "1.30": must be "latest" or "v1.x"; the API server refuses the Namespace (Pod Security admission validates these labels on create and update; one that already carries it is evaluated with this mode at version latest)
25:11 error psa/privileged spec.template.spec.containers[0].securityContext.privileged: privileged (container "app" must not set securityContext.privileged=true)
29:21 error psa/hostProbesAndHostLifecycle spec.template.spec.containers[0].livenessProbe.httpGet.host: probe or lifecycle host (container "app" uses probe or lifecycle host "10.0.0.1")
`,
		},
		{
			name: "namespace without labels: privileged, as in a cluster",
			src:  namespace() + workload,
			want: "",
		},
		{
			name: "privileged namespace",
			src:  namespace("pod-security.kubernetes.io/enforce: privileged") + workload,
			want: "",
		},
		{
			name: "namespace missing: --psa-level default restricted, enforce",
			src:  withoutRunAsNonRoot(restrictedDeployment),
			want: `15:9 error psa/runAsNonRoot spec.template.spec.containers[0].securityContext.runAsNonRoot: runAsNonRoot != true (pod or container "app" must set securityContext.runAsNonRoot=true) [assumed shop]
`,
		},
		{
			name: "namespace missing: --psa-level baseline --psa-version v1.30",
			src:  workload,
			opts: func(o *rules.Options) { o.PSALevel, o.PSAVersion = "baseline", "v1.30" },
			want: `17:11 error psa/privileged spec.template.spec.containers[0].securityContext.privileged: privileged (container "app" must not set securityContext.privileged=true) [assumed shop]
`,
		},
		{
			name: "namespace missing: --psa-level privileged",
			src:  workload,
			opts: func(o *rules.Options) { o.PSALevel = "privileged" },
			want: "",
		},
		{
			name: "no namespace means default",
			src: strings.Replace(namespace("pod-security.kubernetes.io/enforce: baseline"), "name: shop", "name: default", 1) +
				strings.Replace(workload, "  namespace: shop\n", "", 1),
			want: `23:11 error psa/privileged spec.template.spec.containers[0].securityContext.privileged: privileged (container "app" must not set securityContext.privileged=true)
27:21 error psa/hostProbesAndHostLifecycle spec.template.spec.containers[0].livenessProbe.httpGet.host: probe or lifecycle host (container "app" uses probe or lifecycle host "10.0.0.1")
`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := rules.DefaultOptions()
			if tt.opts != nil {
				tt.opts(opts)
			}
			if got := describeFindings(lint(t, tt.src, opts)); got != tt.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}

func TestFindings(t *testing.T) {
	tests := []struct {
		name  string
		level string // --psa-level; baseline when empty
		src   string
		want  string
	}{
		{
			name:  "container without securityContext: the container",
			level: "restricted",
			src: `apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  securityContext:
    runAsNonRoot: true
    seccompProfile: {type: RuntimeDefault}
  containers:
  - name: app
    image: x
`,
			want: `9:5 error psa/allowPrivilegeEscalation spec.containers[0].securityContext.allowPrivilegeEscalation: allowPrivilegeEscalation != false (container "app" must set securityContext.allowPrivilegeEscalation=false) [assumed default]
9:5 error psa/capabilities_restricted spec.containers[0].securityContext.capabilities: unrestricted capabilities (container "app" must set securityContext.capabilities.drop=["ALL"]) [assumed default]
`,
		},
		{
			name:  "second container, init container, ephemeral container, volume, sysctl, annotation",
			level: "restricted",
			src: `apiVersion: v1
kind: Pod
metadata:
  name: p
  annotations:
    container.apparmor.security.beta.kubernetes.io/app: unconfined
spec:
  securityContext:
    runAsNonRoot: true
    seccompProfile: {type: RuntimeDefault}
    sysctls:
    - {name: kernel.msgmax, value: "1"}
  containers:
  - name: ok
    image: x
    securityContext: &ok
      allowPrivilegeEscalation: false
      capabilities: {drop: [ALL]}
  - name: app
    image: x
    securityContext:
      allowPrivilegeEscalation: false
      capabilities: {drop: [ALL]}
      privileged: true
  initContainers:
  - name: init
    image: x
    securityContext:
      allowPrivilegeEscalation: false
      capabilities: {drop: [ALL], add: [SYS_ADMIN]}
  ephemeralContainers:
  - name: debug
    image: x
    securityContext:
      allowPrivilegeEscalation: false
      capabilities: {drop: [ALL]}
      runAsUser: 0
  volumes:
  - name: scratch
    emptyDir: {}
  - name: host
    hostPath: {path: /etc}
`,
			want: `6:5 error psa/appArmorProfile metadata.annotations["container.apparmor.security.beta.kubernetes.io/app"]: forbidden AppArmor profile (annotation must not set AppArmor profile type to "container.apparmor.security.beta.kubernetes.io/app="unconfined"") [assumed default]
11:5 error psa/sysctls spec.securityContext.sysctls: forbidden sysctls (kernel.msgmax) [assumed default]
24:7 error psa/privileged spec.containers[1].securityContext.privileged: privileged (container "app" must not set securityContext.privileged=true) [assumed default]
30:7 error psa/capabilities_restricted spec.initContainers[0].securityContext.capabilities: unrestricted capabilities (container "init" must not include "SYS_ADMIN" in securityContext.capabilities.add) [assumed default]
37:7 error psa/runAsUser spec.ephemeralContainers[0].securityContext.runAsUser: runAsUser=0 (container "debug" must not set runAsUser=0) [assumed default]
42:5 error psa/restrictedVolumes spec.volumes[1].hostPath: restricted volume types (volume "host" uses restricted volume type "hostPath") [assumed default]
`,
		},
		{
			name:  "field names are case-sensitive; unknown fields are dropped",
			level: "restricted",
			src: `apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  securityContext:
    RunAsNonRoot: true
    seccompProfile: {type: RuntimeDefault}
  containers:
  - name: app
    image: x
    whatever: 1
    securityContext:
      runAsnonroot: true
      Privileged: true
      allowPrivilegeEscalation: false
      capabilities: {drop: [ALL]}
`,
			want: `12:5 error psa/runAsNonRoot spec.containers[0].securityContext.runAsNonRoot: runAsNonRoot != true (pod or container "app" must set securityContext.runAsNonRoot=true) [assumed default]
`,
		},
		{
			name:  "an explicit runAsnonroot: false is ignored",
			level: "restricted",
			src: `apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  securityContext:
    runAsNonRoot: true
    seccompProfile: {type: RuntimeDefault}
  containers:
  - name: app
    image: x
    securityContext:
      runAsnonroot: false
      allowPrivilegeEscalation: false
      capabilities: {drop: [ALL]}
`,
		},
		{
			name: "a value of the wrong type is a decode error",
			src: `apiVersion: apps/v1
kind: Deployment
metadata: {name: d}
spec:
  template:
    spec:
      containers:
      - name: app
        image: x
        securityContext:
          privileged: "yes"
`,
			want: `11:11 error psa/decode spec.template.spec.containers[0].securityContext.privileged: the API server would reject this pod template: spec.template.spec.containers[0].securityContext.privileged must be a boolean (true or false), not a string
`,
		},
		{
			name:  "a volume without a source is an emptyDir",
			level: "restricted",
			src: `apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  securityContext:
    runAsNonRoot: true
    seccompProfile: {type: RuntimeDefault}
  containers:
  - name: app
    image: x
    securityContext:
      allowPrivilegeEscalation: false
      capabilities: {drop: [ALL]}
  volumes:
  - name: scratch
`,
		},
		{
			name: "hostNetwork: ports get hostPort in a Pod and in the Pods a Deployment creates from its template",
			src: `apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  hostNetwork: true
  containers:
  - name: app
    image: x
    ports:
    - containerPort: 8080
  initContainers:
  - name: init
    image: x
    ports:
    - {containerPort: 9090, hostPort: 9090}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: d}
spec:
  template:
    spec:
      hostNetwork: true
      containers:
      - name: app
        image: x
        ports:
        - containerPort: 8080
`,
			want: `5:3 error psa/hostNamespaces spec.hostNetwork: host namespaces (hostNetwork=true) [assumed default]
10:7 error psa/hostPorts spec.containers[0].ports[0].hostPort: hostPort (containers "init", "app" use hostPorts 8080, 9090) [assumed default]
23:7 error psa/hostNamespaces spec.template.spec.hostNetwork: host namespaces (hostNetwork=true) [assumed default]
28:11 error psa/hostPorts spec.template.spec.containers[0].ports[0].hostPort: hostPort (container "app" uses hostPort 8080) [assumed default]
`,
		},
		{
			name: "JobSet: every replicated job, named in the message",
			src: `apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: train}
spec:
  replicatedJobs:
  - name: leader
    template:
      spec:
        template:
          spec:
            containers:
            - name: app
              image: x
              securityContext: {privileged: true}
  - name: workers
    template:
      spec:
        template:
          spec:
            hostPID: true
            containers:
            - name: app
              image: x
`,
			want: `14:33 error psa/privileged spec.replicatedJobs[0].template.spec.template.spec.containers[0].securityContext.privileged: replicated job "leader": privileged (container "app" must not set securityContext.privileged=true) [assumed default]
20:13 error psa/hostNamespaces spec.replicatedJobs[1].template.spec.template.spec.hostPID: replicated job "workers": host namespaces (hostPID=true) [assumed default]
`,
		},
		{
			name: "kiln.dev/ignore suppresses the named rule only",
			src: `apiVersion: v1
kind: Pod
metadata:
  name: p
  annotations:
    kiln.dev/ignore: "psa/privileged # the node agent needs it"
spec:
  hostIPC: true
  containers:
  - name: app
    image: x
    securityContext: {privileged: true}
`,
			want: `8:3 error psa/hostNamespaces spec.hostIPC: host namespaces (hostIPC=true) [assumed default]
12:23 error psa/privileged spec.containers[0].securityContext.privileged: privileged (container "app" must not set securityContext.privileged=true) [assumed default] (suppressed)
`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := rules.DefaultOptions()
			opts.PSALevel = "baseline"
			if tt.level != "" {
				opts.PSALevel = tt.level
			}
			if got := describeFindings(lint(t, tt.src, opts)); got != tt.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}

// TestUndeclaredNamespaces: a workload whose Namespace is not in the input
// is judged at the levels psa.namespaces gives it, else privileged in the
// system namespaces, else at the assumed level, which every such finding
// says (with how to set it) and carries (AssumedNamespace). A Namespace in
// the input wins over the configuration.
func TestUndeclaredNamespaces(t *testing.T) {
	const (
		enforce = "pod-security.kubernetes.io/enforce"
		warn    = "pod-security.kubernetes.io/warn"
	)
	tests := []struct {
		name, file string
		opts       func(*rules.Options)
		want       string
	}{
		{
			name: "assumed restricted: said on every finding", file: "app.yaml",
			want: `21:9 error psa/allowPrivilegeEscalation [shop] allowPrivilegeEscalation != false (container "app" must set securityContext.allowPrivilegeEscalation=false) (assumed restricted: namespace "shop" is not in the input)
24:21 error psa/hostProbesAndHostLifecycle [shop] probe or lifecycle host (container "app" uses probe or lifecycle host "10.0.0.1") (assumed restricted: namespace "shop" is not in the input)
39:7 error psa/runAsUser [default] runAsUser=0 (container "app" must not set runAsUser=0) (assumed restricted: namespace "default" is not in the input)
`,
		},
		{
			name: "assumed at --psa-level and --psa-version", file: "app.yaml",
			opts: func(o *rules.Options) { o.PSALevel, o.PSAVersion = "restricted", "v1.30" },
			want: `21:9 error psa/allowPrivilegeEscalation [shop] allowPrivilegeEscalation != false (container "app" must set securityContext.allowPrivilegeEscalation=false) (assumed restricted v1.30: namespace "shop" is not in the input)
39:7 error psa/runAsUser [default] runAsUser=0 (container "app" must not set runAsUser=0) (assumed restricted v1.30: namespace "default" is not in the input)
`,
		},
		{
			name: "psa.namespaces: judged as configured, nothing assumed there", file: "app.yaml",
			opts: func(o *rules.Options) {
				o.PSANamespaces = map[string]map[string]string{"shop": {enforce: "baseline"}, "default": {warn: "restricted"}}
			},
			want: `24:21 error psa/hostProbesAndHostLifecycle [-] probe or lifecycle host (container "app" uses probe or lifecycle host "10.0.0.1")
39:7 warning psa/runAsUser [-] runAsUser=0 (container "app" must not set runAsUser=0)
`,
		},
		{
			name: "system namespaces: privileged", file: "system.yaml",
		},
		{
			name: "system namespaces: --psa-level does not apply", file: "system.yaml",
			opts: func(o *rules.Options) { o.PSALevel = "baseline" },
		},
		{
			name: "system namespace set in psa.namespaces", file: "system.yaml",
			opts: func(o *rules.Options) {
				o.PSANamespaces = map[string]map[string]string{"kube-system": {enforce: "baseline"}}
			},
			want: `15:7 error psa/hostNamespaces [-] host namespaces (hostNetwork=true)
20:11 error psa/privileged [-] privileged (container "agent" must not set securityContext.privileged=true)
25:9 error psa/hostPathVolumes [-] hostPath volumes (volume "host")
`,
		},
		{
			name: "system namespace declared in the input", file: "declared-system.yaml",
			want: `15:3 error psa/hostNamespaces [-] host namespaces (hostPID=true)
`,
		},
		{
			name: "the input's Namespace wins over psa.namespaces", file: "declared-system.yaml",
			opts: func(o *rules.Options) {
				o.PSANamespaces = map[string]map[string]string{"kube-system": {enforce: "privileged"}}
			},
			want: `15:3 error psa/hostNamespaces [-] host namespaces (hostPID=true)
`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src, err := os.ReadFile(filepath.Join("testdata", "undeclared", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			opts := rules.DefaultOptions()
			if tt.opts != nil {
				tt.opts(opts)
			}
			res := lint(t, string(src), opts)
			var b strings.Builder
			for _, f := range res.Findings {
				ns := f.AssumedNamespace
				if ns == "" {
					ns = "-"
				}
				fmt.Fprintf(&b, "%d:%d %s %s [%s] %s\n", f.Pos.Line, f.Pos.Column, f.Severity, f.Rule, ns, f.Message)
			}
			if b.String() != tt.want {
				t.Errorf("got:\n%s\nwant:\n%s", b.String(), tt.want)
			}
			assumed := strings.Count(tt.want, "] ") - strings.Count(tt.want, "[-] ")
			if res.Summary.Assumed != assumed {
				t.Errorf("summary counts %d assumed, want %d", res.Summary.Assumed, assumed)
			}
		})
	}
}

// TestBadConfiguredLabels: labels of psa.namespaces that upstream cannot
// parse stop the run (package settings reports them at their line first).
func TestBadConfiguredLabels(t *testing.T) {
	opts := rules.DefaultOptions()
	opts.PSANamespaces = map[string]map[string]string{"shop": {"pod-security.kubernetes.io/enforce": "strict"}}
	objs, _ := manifest.Parse("t.yaml", []byte(restrictedDeployment))
	_, err := (&rules.Engine{Checkers: []*rules.Checker{Checker}, Options: opts}).Run(objs, nil)
	if err == nil || !strings.Contains(err.Error(), "psa.namespaces.shop") {
		t.Errorf("err = %v, want one naming psa.namespaces.shop", err)
	}
}

// TestRefusedObject: on an object the server refuses in validation (the
// admission stage set Refused), Pod Security never runs on a real server:
// what it would say is said as found after that first error.
func TestRefusedObject(t *testing.T) {
	const src = `apiVersion: apps/v1
kind: StatefulSet
metadata: {name: s}
spec:
  template:
    metadata: {labels: {app: s}}
    spec:
      containers:
      - name: app
        image: x
        securityContext: {privileged: true}
`
	for _, refused := range []bool{false, true} {
		objs, errs := manifest.Parse("test.yaml", []byte(src))
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		objs[0].Refused = refused
		opts := rules.DefaultOptions()
		opts.PSALevel = "baseline"
		res, err := (&rules.Engine{Checkers: []*rules.Checker{Checker}, Options: opts}).Run(objs, nil)
		if err != nil {
			t.Fatal(err)
		}
		got := describeFindings(res)
		want := `11:27 error psa/privileged spec.template.spec.containers[0].securityContext.privileged: privileged (container "app" must not set securityContext.privileged=true)`
		if refused {
			want += admit.NextSuffix
		}
		if want += " [assumed default]\n"; got != want {
			t.Errorf("refused %v: got\n%s\nwant\n%s", refused, got, want)
		}
	}
}
