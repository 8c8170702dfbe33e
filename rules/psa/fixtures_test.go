package psa

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules"
	"k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"
	"sigs.k8s.io/yaml"
)

// fixtureRoot returns the test/testdata tree of the k8s.io/pod-security-admission module.
func fixtureRoot(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-json", "k8s.io/pod-security-admission").Output()
	if err != nil {
		t.Fatalf("go list -m k8s.io/pod-security-admission: %v", err)
	}
	var mod struct{ Dir string }
	if err := json.Unmarshal(out, &mod); err != nil || mod.Dir == "" {
		t.Fatalf("go list -m: no module directory in %s (%v); run go mod download k8s.io/pod-security-admission", out, err)
	}
	return filepath.Join(mod.Dir, "test", "testdata")
}

// wrappers put a pod's metadata and spec into each workload kind.
var wrappers = []struct {
	kind string
	wrap func(name, ns string, meta, spec any) map[string]any
}{
	{"Pod", func(name, ns string, meta, spec any) map[string]any {
		m := map[string]any{}
		for k, v := range meta.(map[string]any) {
			m[k] = v
		}
		m["name"], m["namespace"] = name, ns
		return map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": m, "spec": spec}
	}},
	{"PodTemplate", func(name, ns string, meta, spec any) map[string]any {
		return object("v1", "PodTemplate", name, ns, "template", map[string]any{"metadata": meta, "spec": spec})
	}},
	{"ReplicationController", func(name, ns string, meta, spec any) map[string]any {
		return object("v1", "ReplicationController", name, ns, "spec", templateSpec(meta, spec))
	}},
	{"Deployment", func(name, ns string, meta, spec any) map[string]any {
		return object("apps/v1", "Deployment", name, ns, "spec", templateSpec(meta, spec))
	}},
	{"ReplicaSet", func(name, ns string, meta, spec any) map[string]any {
		return object("apps/v1", "ReplicaSet", name, ns, "spec", templateSpec(meta, spec))
	}},
	{"StatefulSet", func(name, ns string, meta, spec any) map[string]any {
		return object("apps/v1", "StatefulSet", name, ns, "spec", templateSpec(meta, spec))
	}},
	{"DaemonSet", func(name, ns string, meta, spec any) map[string]any {
		return object("apps/v1", "DaemonSet", name, ns, "spec", templateSpec(meta, spec))
	}},
	{"Job", func(name, ns string, meta, spec any) map[string]any {
		return object("batch/v1", "Job", name, ns, "spec", templateSpec(meta, spec))
	}},
	{"CronJob", func(name, ns string, meta, spec any) map[string]any {
		return object("batch/v1", "CronJob", name, ns, "spec", map[string]any{
			"schedule": "0 * * * *", "jobTemplate": map[string]any{"spec": templateSpec(meta, spec)}})
	}},
	{"JobSet", func(name, ns string, meta, spec any) map[string]any {
		return object("jobset.x-k8s.io/v1alpha2", "JobSet", name, ns, "spec", map[string]any{
			"replicatedJobs": []any{map[string]any{"name": "workers", "replicas": 1,
				"template": map[string]any{"spec": templateSpec(meta, spec)}}}})
	}},
}

func object(apiVersion, kind, name, ns, key string, value any) map[string]any {
	return map[string]any{"apiVersion": apiVersion, "kind": kind,
		"metadata": map[string]any{"name": name, "namespace": ns}, key: value}
}

func templateSpec(meta, spec any) map[string]any {
	return map[string]any{"template": map[string]any{"metadata": meta, "spec": spec}}
}

// checkIDOf maps a fixture file name ("allowprivilegeescalation0.yaml") to its
// check ID, matching case-insensitively without the trailing digits.
func checkIDOf(file string, ids []policy.CheckID) (policy.CheckID, bool) {
	base := strings.TrimRight(strings.TrimSuffix(file, ".yaml"), "0123456789")
	for _, id := range ids {
		if strings.EqualFold(string(id), base) {
			return id, true
		}
	}
	return "", false
}

// acceptedIDs returns the check IDs that may report a fixture of check id at a
// level and version: the check itself and, at restricted, the restricted
// checks that override it at that version. Upstream generates the restricted
// fixtures of baseline checks from the baseline generators, but at restricted
// the overriding check runs instead (e.g. procmount0 in restricted/v1.35 is
// rejected by procMount_restricted, hostpathvolumes0 by restrictedVolumes).
func acceptedIDs(checks []policy.Check, id policy.CheckID, level api.Level, version api.Version) map[string]bool {
	out := map[string]bool{RuleID(id): true}
	if level != api.LevelRestricted {
		return out
	}
	for _, c := range checks {
		for i, v := range c.Versions {
			if version.Older(v.MinimumVersion) {
				continue
			}
			if i+1 < len(c.Versions) && !version.Older(c.Versions[i+1].MinimumVersion) {
				continue
			}
			for _, o := range v.OverrideCheckIDs {
				if o == id {
					out[RuleID(c.ID)] = true
				}
			}
		}
	}
	return out
}

// TestUpstreamFixtures wraps every upstream Pod Security fixture in every
// workload kind, in a namespace labelled with the fixture's level and
// version, and checks kiln's verdict: a fail fixture gets an error finding for
// its check (or the check that overrides it), a pass fixture gets none.
//
// The hostNetwork default (hostPort = containerPort) applies to kind Pod only,
// so a hostNetwork fixture with container ports would fail hostPorts as a Pod
// but not as a Deployment. No upstream fixture combines hostNetwork: true with
// ports, and every hostNetwork fixture is a fail fixture (hostNamespaces and
// windowsHostProcess), so the verdicts agree across kinds; an extra hostPorts
// finding would only add to a failure.
func TestUpstreamFixtures(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go command not found; cannot locate the k8s.io/pod-security-admission module")
	}
	root := fixtureRoot(t)
	checks := policy.DefaultChecks()
	var ids []policy.CheckID
	for _, c := range checks {
		ids = append(ids, c.ID)
	}
	dirs, _ := filepath.Glob(filepath.Join(root, "*", "v1.*"))
	if len(dirs) == 0 {
		t.Fatalf("no fixture directories under %s", root)
	}
	total := 0
	for _, dir := range dirs {
		n, _ := filepath.Glob(filepath.Join(dir, "*", "*.yaml"))
		total += len(n)
	}
	if total < 1000 {
		t.Fatalf("found only %d fixtures under %s", total, root)
	}
	t.Logf("%d fixtures × %d kinds", total, len(wrappers))

	for _, dir := range dirs {
		level := api.Level(filepath.Base(filepath.Dir(dir)))
		versionName := filepath.Base(dir)
		version, err := api.ParseVersion(versionName)
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		t.Run(string(level)+"/"+versionName, func(t *testing.T) {
			t.Parallel()
			ns := strings.ReplaceAll(fmt.Sprintf("%s-%s", level, versionName), ".", "-")
			var docs []string
			nsObj, _ := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{
				"name": ns, "labels": map[string]any{api.EnforceLevelLabel: string(level), api.EnforceVersionLabel: versionName}}})
			docs = append(docs, string(nsObj))

			type fixture struct {
				expect string // "pass" or "fail"
				file   string
				id     policy.CheckID
			}
			byName := map[string]fixture{}
			for _, expect := range []string{"pass", "fail"} {
				files, _ := filepath.Glob(filepath.Join(dir, expect, "*.yaml"))
				for _, f := range files {
					base := filepath.Base(f)
					fx := fixture{expect: expect, file: filepath.Join(string(level), versionName, expect, base)}
					if expect == "fail" {
						id, ok := checkIDOf(base, ids)
						if !ok {
							t.Errorf("%s: no check ID matches the file name", fx.file)
							continue
						}
						fx.id = id
					}
					data, err := os.ReadFile(f)
					if err != nil {
						t.Fatal(err)
					}
					var pod map[string]any
					if err := yaml.Unmarshal(data, &pod); err != nil {
						t.Fatalf("%s: %v", fx.file, err)
					}
					meta, _ := pod["metadata"].(map[string]any)
					if meta == nil {
						meta = map[string]any{}
					}
					name := expect + "-" + strings.TrimSuffix(base, ".yaml")
					byName[name] = fx
					for _, w := range wrappers {
						obj, err := json.Marshal(w.wrap(name, ns, meta, pod["spec"]))
						if err != nil {
							t.Fatal(err)
						}
						docs = append(docs, string(obj))
					}
				}
			}
			objs, errs := manifest.Parse(ns+".yaml", []byte(strings.Join(docs, "\n---\n")))
			if len(errs) > 0 {
				t.Fatalf("parse: %v", errs)
			}
			res, err := (&rules.Engine{Checkers: []*rules.Checker{Checker}}).Run(objs, nil)
			if err != nil {
				t.Fatal(err)
			}
			refs := map[[2]string]manifest.Ref{}
			for _, o := range objs {
				refs[[2]string{o.Kind, o.Name}] = o.Ref()
			}
			found := map[manifest.Ref][]rules.Finding{}
			for _, f := range res.Findings {
				found[f.Object] = append(found[f.Object], f)
			}
			for name, fx := range byName {
				for _, w := range wrappers {
					ref, ok := refs[[2]string{w.kind, name}]
					if !ok {
						t.Fatalf("%s as %s: object not parsed", fx.file, w.kind)
					}
					fs := found[ref]
					if fx.expect == "pass" {
						for _, f := range fs {
							t.Errorf("%s as %s: pass fixture got %s %s: %s", fx.file, w.kind, f.Severity, f.Rule, f.Message)
						}
						continue
					}
					accepted := acceptedIDs(checks, fx.id, level, version)
					var got []string
					ok = false
					for _, f := range fs {
						got = append(got, f.Severity.String()+" "+f.Rule)
						if f.Severity == rules.Error && accepted[f.Rule] {
							ok = true
						}
					}
					if !ok {
						sort.Strings(got)
						t.Errorf("%s as %s: want an error for %v, got %v", fx.file, w.kind, keys(accepted), got)
					}
				}
			}
		})
	}
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
