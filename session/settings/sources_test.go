package settings

import (
	"reflect"
	"strings"
	"testing"

	"github.com/kilnhq/kiln/manifest"
)

// fakeEnv is an environment for FromArgo.
type fakeEnv map[string]string

func (f fakeEnv) lookup(k string) (string, bool) { v, ok := f[k]; return v, ok }

func (f fakeEnv) environ() []string {
	var out []string
	for k, v := range f {
		out = append(out, k+"="+v)
	}
	return out
}

// argoWant are the settings Argo CD's environment can give.
type argoWant struct {
	kubeVersion, psaLevel, psaVersion string
	policies                          []string
	config, storageClasses, failOn    string
	namespace                         string
}

func TestFromArgo(t *testing.T) {
	tests := []struct {
		name    string
		env     fakeEnv
		want    argoWant
		notes   []string
		wantErr string
	}{
		{name: "nothing set", env: fakeEnv{}, want: argoWant{}},
		{name: "cluster version and namespace", env: fakeEnv{"KUBE_VERSION": "1.31.4", "ARGOCD_APP_NAMESPACE": "shop"},
			want: argoWant{kubeVersion: "1.31", namespace: "shop"}},
		{name: "cluster version with metadata", env: fakeEnv{"KUBE_VERSION": "v1.30.2+k3s1"},
			want: argoWant{kubeVersion: "1.30"}},
		{name: "cluster newer than kiln", env: fakeEnv{"KUBE_VERSION": "1.99.0"},
			want: argoWant{kubeVersion: manifest.LatestKube.String()}, notes: []string{"newer than kiln knows"}},
		{name: "cluster version garbage", env: fakeEnv{"KUBE_VERSION": "banana"}, want: argoWant{}, notes: []string{"not a Kubernetes version"}},
		{name: "env beats cluster", env: fakeEnv{"KUBE_VERSION": "1.31.0", "ARGOCD_ENV_KILN_KUBE_VERSION": "1.29",
			"ARGOCD_ENV_KILN_PSA_LEVEL": "baseline", "ARGOCD_ENV_KILN_PSA_VERSION": "v1.29", "ARGOCD_ENV_KILN_FAIL_ON": "warning",
			"ARGOCD_ENV_KILN_POLICIES": "policies/, ../shared/vap.yaml", "ARGOCD_ENV_KILN_CONFIG": "kiln.yaml",
			"ARGOCD_ENV_KILN_STORAGE_CLASSES": "sc.yaml", "ARGOCD_ENV_KILN_NAMESPACE": "other", "ARGOCD_APP_NAMESPACE": "shop"},
			want: argoWant{kubeVersion: "1.29", psaLevel: "baseline", psaVersion: "v1.29",
				policies: []string{"policies/", "../shared/vap.yaml"}, config: "kiln.yaml", storageClasses: "sc.yaml",
				failOn: "warning", namespace: "other"}},
		{name: "parameters beat env", env: fakeEnv{"ARGOCD_ENV_KILN_PSA_LEVEL": "baseline", "ARGOCD_ENV_KILN_POLICIES": "a",
			"ARGOCD_APP_PARAMETERS": `[{"name":"psa-level","string":"privileged"},{"name":"policies","array":["p1","p2"]},{"name":"fail-on","string":"never"}]`},
			want: argoWant{psaLevel: "privileged", policies: []string{"p1", "p2"}, failOn: "never"}},
		{name: "list parameter as a string", env: fakeEnv{"ARGOCD_APP_PARAMETERS": `[{"name":"policies","string":"a,b"}]`},
			want: argoWant{policies: []string{"a", "b"}}},
		{name: "empty parameters", env: fakeEnv{"ARGOCD_APP_PARAMETERS": ""}, want: argoWant{}},
		{name: "unknown env", env: fakeEnv{"ARGOCD_ENV_KILN_PSA": "baseline"}, wantErr: "ARGOCD_ENV_KILN_PSA: unknown setting"},
		{name: "other ARGOCD_ENV ignored", env: fakeEnv{"ARGOCD_ENV_FOO": "bar"}, want: argoWant{}},
		{name: "unknown parameter", env: fakeEnv{"ARGOCD_APP_PARAMETERS": `[{"name":"psa","string":"x"}]`}, wantErr: `plugin parameter psa: unknown`},
		{name: "map parameter", env: fakeEnv{"ARGOCD_APP_PARAMETERS": `[{"name":"psa-level","map":{"a":"b"}}]`}, wantErr: "not a map"},
		{name: "array for a string", env: fakeEnv{"ARGOCD_APP_PARAMETERS": `[{"name":"psa-level","array":["a"]}]`}, wantErr: "not an array"},
		{name: "parameters not JSON", env: fakeEnv{"ARGOCD_APP_PARAMETERS": `{name: x}`}, wantErr: "not a JSON list"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, notes, err := FromArgo(tt.env.lookup, tt.env.environ())
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			w := argoWant{got.KubeVersion, got.PSALevel, got.PSAVersion, got.Policies, got.Config, got.StorageClasses, got.FailOn, got.Namespace}
			if !reflect.DeepEqual(w, tt.want) {
				t.Errorf("got %+v\nwant %+v", w, tt.want)
			}
			if len(notes) != len(tt.notes) {
				t.Fatalf("notes %q, want %d", notes, len(tt.notes))
			}
			for i := range notes {
				if !strings.Contains(notes[i], tt.notes[i]) {
					t.Errorf("note %q lacks %q", notes[i], tt.notes[i])
				}
			}
		})
	}
}
