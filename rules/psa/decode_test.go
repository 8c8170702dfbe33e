package psa

import (
	"strings"
	"testing"

	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"
)

func contentOf(t testing.TB, src string) (*manifest.Object, map[string]any) {
	t.Helper()
	objs, errs := manifest.Parse("test.yaml", []byte(src))
	if len(errs) > 0 || len(objs) != 1 {
		t.Fatalf("parse: %v", errs)
	}
	c, err := objs[0].Content()
	if err != nil {
		t.Fatal(err)
	}
	return objs[0], c
}

// TestDefaultsChangeVerdicts shows that both server defaults matter: without
// them upstream would judge the decoded pod differently.
func TestDefaultsChangeVerdicts(t *testing.T) {
	j, err := sharedJudge()
	if err != nil {
		t.Fatal(err)
	}
	restricted := api.LevelVersion{Level: api.LevelRestricted, Version: api.LatestVersion()}
	baseline := api.LevelVersion{Level: api.LevelBaseline, Version: api.LatestVersion()}
	failed := func(lv api.LevelVersion, spec *corev1.PodSpec, id policy.CheckID) bool {
		fs, err := j.evaluate(lv, &metav1.ObjectMeta{}, spec)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range fs {
			if f.check.id == id {
				return true
			}
		}
		return false
	}

	_, c := contentOf(t, "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  volumes:\n  - name: scratch\n")
	raw, err := convert[corev1.PodSpec](c, "spec")
	if err != nil {
		t.Fatal(err)
	}
	if !failed(restricted, raw, "restrictedVolumes") {
		t.Fatal("a volume without a source should fail restrictedVolumes before defaulting")
	}
	_, spec, err := decodeTemplate(c, manifest.PodTemplate{})
	if err != nil {
		t.Fatal(err)
	}
	if spec.Volumes[0].EmptyDir == nil || failed(restricted, spec, "restrictedVolumes") {
		t.Errorf("a volume without a source should default to emptyDir and pass: %+v", spec.Volumes[0])
	}

	hostNet := "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  hostNetwork: true\n  containers:\n  - {name: a, image: x, ports: [{containerPort: 80}, {containerPort: 81, hostPort: 9000}]}\n  ephemeralContainers:\n  - {name: e, image: x, ports: [{containerPort: 82}]}\n"
	_, c = contentOf(t, hostNet)
	// A Pod gets the server's Pod defaulting on create, and so does every Pod
	// a controller creates from a template: both see hostPort = containerPort.
	for _, isPod := range []bool{true, false} {
		_, spec, err := decodeTemplate(c, manifest.PodTemplate{})
		if err != nil {
			t.Fatal(err)
		}
		ports := spec.Containers[0].Ports
		wantFirst := int32(80)
		if ports[0].HostPort != wantFirst || ports[1].HostPort != 9000 || spec.EphemeralContainers[0].Ports[0].HostPort != 0 {
			t.Errorf("isPod=%v: host ports %d, %d, ephemeral %d; want %d, 9000, 0", isPod, ports[0].HostPort, ports[1].HostPort,
				spec.EphemeralContainers[0].Ports[0].HostPort, wantFirst)
		}
		spec.HostNetwork = false // judge the ports alone
		if got := failed(baseline, spec, "hostPorts"); !got {
			t.Errorf("isPod=%v: the explicit hostPort 9000 should fail hostPorts", isPod)
		}
	}
}

func TestDecodeErrors(t *testing.T) {
	tests := []struct{ src, want string }{
		{"apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: [1]\n", "spec must be a mapping, not a list"},
		{"apiVersion: v1\nkind: Pod\nmetadata: {name: p, labels: {a: [1]}}\nspec: {}\n", "metadata.labels.a must be a string, not a list (every entry of metadata.labels must be a string)"},
		{"apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: a, securityContext: {runAsUser: \"0\"}}]}\n", "spec.containers[0].securityContext.runAsUser must be an integer, not a string"},
		{"apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {hostNetwork: null, containers: null}\n", ""},
	}
	for _, tt := range tests {
		_, c := contentOf(t, tt.src)
		_, _, err := decodeTemplate(c, manifest.PodTemplate{})
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tt.want {
			t.Errorf("%q:\ngot  %q\nwant %q", tt.src, got, tt.want)
		}
	}
}

// TestLocateFallsBackToPodSpec covers a failure no reduction explains: it is placed on the pod spec.
func TestLocateFallsBackToPodSpec(t *testing.T) {
	always := check{id: "custom", fn: func(*metav1.ObjectMeta, *corev1.PodSpec) policy.CheckResult { return policy.CheckResult{} }}
	if got := locate(always, &metav1.ObjectMeta{}, &corev1.PodSpec{Containers: []corev1.Container{{Name: "a"}}}); got != "spec" {
		t.Errorf("locate = %q, want spec", got)
	}
	o, _ := contentOf(t, "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  template:\n    spec:\n      containers: []\n")
	if pos := o.Locate(join("spec.template", "spec")); pos.Line != 6 || pos.Column != 5 {
		t.Errorf("pod spec at %v, want 6:5", pos)
	}
}

func TestBadOptions(t *testing.T) {
	objs, _ := manifest.Parse("x.yaml", []byte("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {}\n"))
	for _, o := range []rules.Options{{PSALevel: "strict"}, {PSAVersion: "1.30"}} {
		_, err := (&rules.Engine{Checkers: []*rules.Checker{Checker}, Options: &o}).Run(objs, nil)
		if err == nil || !strings.Contains(err.Error(), "Pod Security") {
			t.Errorf("options %+v: err = %v, want a Pod Security level/version error", o, err)
		}
	}
}

// FuzzDecodeTemplate feeds arbitrary YAML through decoding and judging: bad
// input must be a finding or nothing, never a panic.
func FuzzDecodeTemplate(f *testing.F) {
	f.Add(restrictedDeployment)
	f.Add("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: a, ports: [{containerPort: 1.5}]}]}\n")
	f.Add("apiVersion: v1\nkind: Pod\nmetadata: {name: p, annotations: {a: 1}}\nspec: {volumes: [{}], hostNetwork: true}\n")
	f.Add("apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata: {name: j}\nspec: {replicatedJobs: [{template: {spec: {template: 3}}}]}\n")
	f.Fuzz(func(t *testing.T, src string) {
		objs, _ := manifest.Parse("fuzz.yaml", []byte(src))
		if len(objs) == 0 {
			return
		}
		if _, err := (&rules.Engine{Checkers: []*rules.Checker{Checker}}).Run(objs, nil); err != nil {
			t.Fatal(err)
		}
	})
}
