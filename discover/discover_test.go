package discover

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/kilnhq/kiln/manifest"
)

// discoverRepo runs Discover on testdata/repo once per test.
func discoverRepo(t *testing.T) *Result {
	t.Helper()
	return Discover([]string{"testdata/repo"}, Options{KubeVersion: manifest.LatestKube})
}

func unitByDir(t *testing.T, res *Result, dir string) *Unit {
	t.Helper()
	for _, u := range res.Units {
		if filepath.ToSlash(u.Dir) == dir {
			return u
		}
	}
	t.Fatalf("no unit %s; have %v", dir, unitDirs(res))
	return nil
}

func unitDirs(res *Result) []string {
	var out []string
	for _, u := range res.Units {
		out = append(out, u.Kind+":"+filepath.ToSlash(u.Dir))
	}
	return out
}

func objectByName(t *testing.T, u *Unit, kind, name string) *manifest.Object {
	t.Helper()
	for _, o := range u.Source.Objects {
		if o.Kind == kind && o.Name == name {
			return o
		}
	}
	t.Fatalf("%s has no %s/%s", u.Dir, kind, name)
	return nil
}

func TestDiscoverWhatEachFileIs(t *testing.T) {
	res := discoverRepo(t)
	var files []string
	for _, f := range res.Files {
		files = append(files, filepath.ToSlash(f))
	}
	// Plain files only: no kustomization, base, patch or chart file.
	if want := []string{"testdata/repo/misc/docker-compose.yml", "testdata/repo/misc/patch6902.json", "testdata/repo/misc/pod.yaml"}; strings.Join(files, ",") != strings.Join(want, ",") {
		t.Errorf("plain files = %v, want %v", files, want)
	}
	// Topmost kustomizations only (the base is the overlay's), the chart
	// with a file:// dependency (the dependency not on its own), the
	// broken chart (with its error).
	if got, want := strings.Join(unitDirs(res), ","), "chart:testdata/repo/charts/app,chart:testdata/repo/charts/broken,kustomization:testdata/repo/kust/overlays/prod"; got != want {
		t.Errorf("units = %s, want %s", got, want)
	}
	// The remote kustomization and the file it reads, and a patch beside a
	// kustomization that no build reads.
	var skipped []string
	for _, s := range res.Skipped {
		skipped = append(skipped, filepath.ToSlash(s.Pos.File)+": "+s.Reason)
	}
	want := []string{
		"testdata/repo/kust/remote/kustomization.yaml: " + reasonRemoteKust,
		"testdata/repo/kust/overlays/prod/unused_patch.yaml: " + ReasonPatch,
		"testdata/repo/kust/remote/local.yaml: " + ReasonRemoteInput,
	}
	if strings.Join(skipped, "\n") != strings.Join(want, "\n") {
		t.Errorf("skipped:\n%s\nwant:\n%s", strings.Join(skipped, "\n"), strings.Join(want, "\n"))
	}
	if res.Count("chart") != 1 || res.Count("kustomization") != 1 {
		t.Errorf("rendered %d charts and %d kustomizations, want 1 and 1", res.Count("chart"), res.Count("kustomization"))
	}
}

func TestRemoteBaseIsWarnedAndNeverFetched(t *testing.T) {
	res := discoverRepo(t)
	var warnings []string
	for _, w := range res.Warnings {
		warnings = append(warnings, w.Error())
	}
	joined := strings.Join(warnings, "\n")
	if !strings.Contains(joined, "testdata/repo/kust/remote/kustomization.yaml:2:5: warning: remote base github.com/acme/deploy//base?ref=v1.0.0 is not fetched") {
		t.Errorf("warnings = %q, want one naming the remote base at its line", joined)
	}
	for _, u := range res.Units {
		if strings.Contains(u.Dir, "remote") {
			t.Errorf("remote kustomization was built: %v", u.Source.Objects)
		}
	}
	for _, f := range res.Files {
		if strings.Contains(f, "remote") {
			t.Errorf("a file of the skipped kustomization is linted on its own: %s", f)
		}
	}
}

func TestOverlayWithPatchPointsAtSources(t *testing.T) {
	u := unitByDir(t, discoverRepo(t), "testdata/repo/kust/overlays/prod")
	if len(u.Source.Errs) > 0 {
		t.Fatalf("build errors: %v", u.Source.Errs)
	}
	d := objectByName(t, u, "Deployment", "prod-api")
	if d.Namespace != "prod" || d.Unit != u.Dir {
		t.Errorf("namespace %q unit %q, want prod and %s", d.Namespace, d.Unit, u.Dir)
	}
	c, err := d.Content()
	if err != nil {
		t.Fatal(err)
	}
	if r := c["spec"].(map[string]any)["replicas"]; r != int64(3) {
		t.Errorf("replicas = %v, want the patch's 3", r)
	}
	if _, ok := d.Annotations[originKey]; ok || len(d.Annotations) > 0 {
		t.Errorf("annotations %v left on the object", d.Annotations)
	}
	tests := []struct{ field, want string }{
		{"", "testdata/repo/kust/base/deployment.yaml:1:1"},
		{"spec.template.spec.containers[0].image", "testdata/repo/kust/base/deployment.yaml:17:11"},
		{"metadata.name", "testdata/repo/kust/base/deployment.yaml:4:3"},
		// added by the patch: its nearest field that the base has
		{"spec.template.spec.containers[0].securityContext.privileged", "testdata/repo/kust/base/deployment.yaml:16:11"},
	}
	for _, tt := range tests {
		if got := filepath.ToSlash(d.Locate(tt.field).String()); got != tt.want {
			t.Errorf("Locate(%q) = %s, want %s", tt.field, got, tt.want)
		}
	}
	// A generated object points at its generator in the kustomization.
	for _, o := range u.Source.Objects {
		if o.Kind == "ConfigMap" {
			if got := filepath.ToSlash(o.Pos().String()); got != "testdata/repo/kust/overlays/prod/kustomization.yaml:9:1" {
				t.Errorf("generated ConfigMap %s at %s, want its generator's line", o.Name, got)
			}
			return
		}
	}
	t.Errorf("no generated ConfigMap")
}

func TestChartWithFileDependency(t *testing.T) {
	u := unitByDir(t, discoverRepo(t), "testdata/repo/charts/app")
	if len(u.Source.Errs) > 0 {
		t.Fatalf("render errors: %v", u.Source.Errs)
	}
	var names []string
	for _, o := range u.Source.Objects {
		names = append(names, o.Kind+"/"+o.Name)
	}
	sort.Strings(names)
	if got, want := strings.Join(names, ","), "ConfigMap/release-name-lib,Deployment/release-name-web"; got != want {
		t.Errorf("objects = %s, want %s (NOTES.txt and helpers not objects)", got, want)
	}
	d := objectByName(t, u, "Deployment", "release-name-web")
	tests := []struct{ field, want string }{
		{"spec.template.spec.containers[0].image", "testdata/repo/charts/app/templates/deployment.yaml:19:11"},
		{"spec.template.spec.containers[0].securityContext.privileged", "testdata/repo/charts/app/templates/deployment.yaml:21:13"},
		{"spec.replicas", "testdata/repo/charts/app/templates/deployment.yaml:8:3"},
		// from a helper: the nearest traced parent
		{`metadata.labels["app.kubernetes.io/name"]`, "testdata/repo/charts/app/templates/deployment.yaml:5:3"},
	}
	for _, tt := range tests {
		if got := filepath.ToSlash(d.Locate(tt.field).String()); got != tt.want {
			t.Errorf("Locate(%q) = %s, want %s", tt.field, got, tt.want)
		}
	}
	cm := objectByName(t, u, "ConfigMap", "release-name-lib")
	if got := filepath.ToSlash(cm.File); got != "testdata/repo/charts/app/charts/lib/templates/configmap.yaml" {
		t.Logf("dependency object file = %s", got)
	}
}

func TestChartSettings(t *testing.T) {
	res := Discover([]string{"testdata/repo/charts/app"}, Options{Chart: func(string) ChartSettings {
		return ChartSettings{ReleaseName: "shop", Namespace: "prod", Set: []string{"replicas=5"}}
	}})
	u := unitByDir(t, res, "testdata/repo/charts/app")
	d := objectByName(t, u, "Deployment", "shop-web")
	c, _ := d.Content()
	if r := c["spec"].(map[string]any)["replicas"]; r != int64(5) {
		t.Errorf("replicas = %v, want --set's 5", r)
	}
}

func TestMissingDependencyIsOneError(t *testing.T) {
	u := unitByDir(t, discoverRepo(t), "testdata/repo/charts/broken")
	if len(u.Source.Errs) != 1 {
		t.Fatalf("errors = %v, want one", u.Source.Errs)
	}
	msg := u.Source.Errs[0].Error()
	for _, want := range []string{"testdata/repo/charts/broken/Chart.yaml:5:5", `needs dependency "redis"`, "helm dependency build testdata/repo/charts/broken"} {
		if !strings.Contains(filepath.ToSlash(msg), want) {
			t.Errorf("error %q does not contain %q", msg, want)
		}
	}
	if len(u.Source.Objects) != 0 {
		t.Errorf("a chart with a missing dependency rendered %d objects", len(u.Source.Objects))
	}
}

func TestNamedFileStandsForItsUnit(t *testing.T) {
	res := Discover([]string{"testdata/repo/kust/overlays/prod/patch.yaml", "testdata/repo/charts/app/templates/deployment.yaml"}, Options{})
	if len(res.Files) != 0 {
		t.Errorf("files linted on their own: %v", res.Files)
	}
	if got := strings.Join(unitDirs(res), ","); got != "chart:testdata/repo/charts/app,kustomization:testdata/repo/kust/overlays/prod" {
		t.Errorf("units = %s", got)
	}
}

func TestIsRemote(t *testing.T) {
	for ref, want := range map[string]bool{
		"github.com/acme/deploy//base?ref=v1": true,
		"https://example.com/x.yaml":          true,
		"git@github.com:acme/deploy.git":      true,
		"../base":                             false,
		"deployment.yaml":                     false,
		"base/deployment.yaml":                false,
	} {
		if got := isRemote(ref); got != want {
			t.Errorf("isRemote(%q) = %v, want %v", ref, got, want)
		}
	}
}

// FuzzTraceLines: tracing never panics and maps only to lines of the template.
func FuzzTraceLines(f *testing.F) {
	f.Add("a: 1\nb: 2\n", "a: 1\nb: {{ .Values.b }}\n")
	f.Add("- name: x\n  image: y\n", "{{- range .Values.c }}\n- name: {{ .name }}\n  image: y\n{{- end }}\n")
	f.Fuzz(func(t *testing.T, rendered, tmpl string) {
		lines := traceLines(rendered, tmpl)
		n := strings.Count(tmpl, "\n") + 1
		for _, l := range lines {
			if l < 0 || l > n {
				t.Fatalf("line %d outside the template's %d lines", l, n)
			}
		}
	})
}

func TestPlainRendersNothing(t *testing.T) {
	tests := []struct {
		name     string
		paths    []string
		excluded string
		files    []string
		errs     []string
	}{
		{name: "every manifest file but kustomize's own, no chart entered",
			paths: []string{"testdata/repo"},
			files: []string{
				"testdata/repo/kust/base/deployment.yaml", "testdata/repo/kust/overlays/prod/patch.yaml",
				"testdata/repo/kust/overlays/prod/unused_patch.yaml", "testdata/repo/kust/remote/local.yaml",
				"testdata/repo/misc/docker-compose.yml", "testdata/repo/misc/patch6902.json", "testdata/repo/misc/pod.yaml",
			}},
		{name: "excludes apply", paths: []string{"testdata/repo"}, excluded: "testdata/repo/kust/",
			files: []string{"testdata/repo/misc/docker-compose.yml", "testdata/repo/misc/patch6902.json", "testdata/repo/misc/pod.yaml"}},
		{name: "a path that does not exist", paths: []string{"testdata/repo/none"},
			errs: []string{"testdata/repo/none: cannot read: no such file or directory"}},
		{name: "a directory with nothing to read", paths: []string{"EMPTY"},
			errs: []string{"EMPTY: directory holds no *.yaml, *.yml or *.json files; name a directory with manifests"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.paths[0] == "EMPTY" {
				t.Chdir(t.TempDir())
				if err := os.Mkdir("EMPTY", 0o755); err != nil {
					t.Fatal(err)
				}
			}
			res := Discover(tt.paths, Options{Plain: true, Excluded: func(p string) bool {
				return tt.excluded != "" && strings.HasPrefix(filepath.ToSlash(p), tt.excluded)
			}})
			var files, errs []string
			for _, f := range res.Files {
				files = append(files, filepath.ToSlash(f))
			}
			for _, e := range res.Errs {
				errs = append(errs, e.Error())
			}
			sort.Strings(files)
			if strings.Join(files, "\n") != strings.Join(tt.files, "\n") || strings.Join(errs, "\n") != strings.Join(tt.errs, "\n") {
				t.Errorf("files:\n%s\nerrors:\n%s\nwant files:\n%s\nerrors:\n%s", strings.Join(files, "\n"), strings.Join(errs, "\n"), strings.Join(tt.files, "\n"), strings.Join(tt.errs, "\n"))
			}
			if len(res.Units) > 0 || len(res.Skipped) > 0 {
				t.Errorf("rendered %v, skipped %v: want nothing", unitDirs(res), res.Skipped)
			}
		})
	}
}

// TestMetadataOnlyPatch: a file under a kustomization that holds only
// apiVersion, kind and metadata of an object another file defines is a
// patch nothing applies (kueue's apiservice_cainjection_patch.yaml); one
// whose object no other file defines is an object.
func TestMetadataOnlyPatch(t *testing.T) {
	res := Discover([]string{"testdata/metapatch"}, Options{KubeVersion: manifest.LatestKube})
	var files []string
	for _, f := range res.Files {
		files = append(files, filepath.ToSlash(f))
	}
	if want := "testdata/metapatch/config/default/namespace.yaml"; strings.Join(files, ",") != want {
		t.Errorf("plain files = %v, want %s", files, want)
	}
	var skipped []string
	for _, s := range res.Skipped {
		skipped = append(skipped, filepath.ToSlash(s.Pos.File)+": "+s.Reason+": "+filepath.ToSlash(s.Detail))
	}
	want := `testdata/metapatch/config/default/apiservice_cainjection_patch.yaml: ` + ReasonPatch + `: holds only apiVersion, kind and metadata of APIService "v1beta1.visibility.kueue.x-k8s.io", which testdata/metapatch/config/components/visibility/apiservice.yaml defines, under testdata/metapatch/config/default/kustomization.yaml`
	if strings.Join(skipped, "\n") != want {
		t.Errorf("skipped:\n%s\nwant:\n%s", strings.Join(skipped, "\n"), want)
	}
}
