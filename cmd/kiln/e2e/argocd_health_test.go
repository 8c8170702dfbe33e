package e2e

// The tests of the Argo CD example (examples/argocd): the JobSet health
// check (jobset/health.lua) run as Argo CD runs a resource.customizations
// health script, with gopher-lua, the Lua interpreter Argo CD embeds.

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	lua "github.com/yuin/gopher-lua"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// healthTests is jobset/health_test.yaml, in the layout of Argo CD's
// resource_customizations/<group>/<kind>/health_test.yaml.
type healthTests struct {
	Tests []struct {
		HealthStatus health `json:"healthStatus"`
		InputPath    string `json:"inputPath"`
	} `json:"tests"`
}

// health is what a health script returns (gitops-engine's HealthStatus).
type health struct {
	Status  string `json:"status"`
	Message string `json:"message"`
}

// validStatus are the health codes Argo CD accepts from a script; any
// other is shown as Unknown (util/lua isValidHealthStatusCode).
var validStatus = map[string]bool{"Healthy": true, "Progressing": true, "Degraded": true, "Suspended": true, "Missing": true, "Unknown": true}

// runHealth runs a health script on obj as Argo CD's util/lua runLua does
// for a script from argocd-cm: a state without the standard libraries
// (resource.customizations.useOpenLibs is off by default) but package, base
// and table, a one-second deadline, the object as the global obj (decoded
// as decodeValue does: maps and arrays to tables, numbers to numbers), and
// the returned table read as a HealthStatus. Argo CD also opens a reduced
// os library; the script uses none, so this state has none.
func runHealth(t *testing.T, script string, obj *unstructured.Unstructured) health {
	t.Helper()
	l := lua.NewState(lua.Options{SkipOpenLibs: true})
	defer l.Close()
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{{lua.LoadLibName, lua.OpenPackage}, {lua.BaseLibName, lua.OpenBase}, {lua.TabLibName, lua.OpenTable}} {
		if err := l.CallByParam(lua.P{Fn: l.NewFunction(lib.open), Protect: true}, lua.LString(lib.name)); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	l.SetContext(ctx)
	l.SetGlobal("obj", toLua(l, obj.Object))
	if err := l.DoString(script); err != nil {
		t.Fatalf("the script fails: %v", err)
	}
	ret, ok := l.Get(-1).(*lua.LTable)
	if !ok {
		t.Fatalf("the script returns %s, not a table", l.Get(-1).Type())
	}
	var h health
	ret.ForEach(func(k, v lua.LValue) {
		s, isStr := v.(lua.LString)
		if !isStr {
			t.Errorf("hs.%s is a %s, not a string", k, v.Type())
		}
		switch k.String() {
		case "status":
			h.Status = string(s)
		case "message":
			h.Message = string(s)
		default:
			t.Errorf("the script returns a field %q Argo CD does not read", k)
		}
	})
	if !validStatus[h.Status] {
		t.Errorf("status %q is not a health code: Argo CD would show Unknown", h.Status)
	}
	return h
}

// toLua converts an unstructured value as Argo CD's decodeValue does.
func toLua(l *lua.LState, v any) lua.LValue {
	switch x := v.(type) {
	case bool:
		return lua.LBool(x)
	case float64:
		return lua.LNumber(x)
	case int64:
		return lua.LNumber(x)
	case string:
		return lua.LString(x)
	case []any:
		t := l.CreateTable(len(x), 0)
		for _, it := range x {
			t.Append(toLua(l, it))
		}
		return t
	case map[string]any:
		t := l.CreateTable(0, len(x))
		for k, it := range x {
			t.RawSetH(lua.LString(k), toLua(l, it))
		}
		return t
	}
	return lua.LNil
}

// readObject reads a YAML sample as the API server's JSON decodes into an
// unstructured object (integers as int64).
func readObject(t *testing.T, path string) *unstructured.Unstructured {
	t.Helper()
	y, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	j, err := yaml.YAMLToJSON(y)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(j); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return obj
}

// TestJobSetHealth runs jobset/health.lua on every JobSet status sample of
// jobset/health_test.yaml and wants the health and message listed there.
func TestJobSetHealth(t *testing.T) {
	script, err := os.ReadFile(argoExample("jobset/health.lua"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(argoExample("jobset/health_test.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var tests healthTests
	if err := yaml.UnmarshalStrict(b, &tests); err != nil {
		t.Fatalf("health_test.yaml: %v", err)
	}
	seen := map[string]bool{}
	for _, tt := range tests.Tests {
		got := runHealth(t, string(script), readObject(t, argoExample(filepath.Join("jobset", tt.InputPath))))
		t.Logf("%-30s → %-11s %s", tt.InputPath, got.Status, got.Message)
		if got != tt.HealthStatus {
			t.Errorf("%s: %+v, want %+v", tt.InputPath, got, tt.HealthStatus)
		}
		seen[got.Status] = true
	}
	for _, want := range []string{"Progressing", "Healthy", "Degraded", "Suspended"} {
		if !seen[want] {
			t.Errorf("no sample is %s", want)
		}
	}
	samples, _ := filepath.Glob(argoExample("jobset/testdata/*.yaml"))
	if len(samples) != len(tests.Tests) {
		t.Errorf("%d samples under jobset/testdata, %d tests in health_test.yaml: every sample needs its expected health", len(samples), len(tests.Tests))
	}
}

// TestArgoCDConfigMapHasHealthCheck checks that the argocd-cm patch carries
// health.lua verbatim under the key Argo CD reads a JobSet health check
// from (resource.customizations.health.<group>_<kind>).
func TestArgoCDConfigMapHasHealthCheck(t *testing.T) {
	script, err := os.ReadFile(argoExample("jobset/health.lua"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(argoExample("argocd-cm-jobset-health.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var cm struct {
		Kind     string                `json:"kind"`
		Metadata struct{ Name string } `json:"metadata"`
		Data     map[string]string     `json:"data"`
	}
	if err := yaml.Unmarshal(b, &cm); err != nil {
		t.Fatal(err)
	}
	if cm.Kind != "ConfigMap" || cm.Metadata.Name != "argocd-cm" {
		t.Errorf("the patch is %s/%s, want ConfigMap/argocd-cm", cm.Kind, cm.Metadata.Name)
	}
	const key = "resource.customizations.health.jobset.x-k8s.io_JobSet"
	if cm.Data[key] != string(script) {
		t.Errorf("argocd-cm-jobset-health.yaml's %s is not jobset/health.lua", key)
	}
	k, err := os.ReadFile(argoExample("kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(k), "- path: argocd-cm-jobset-health.yaml") {
		t.Errorf("kustomization.yaml does not apply argocd-cm-jobset-health.yaml")
	}
}

// argoExample is the path of a file of examples/argocd.
func argoExample(p string) string { return filepath.Join(repoRoot, "examples", "argocd", p) }
