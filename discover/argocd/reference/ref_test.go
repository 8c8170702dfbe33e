// Package reference compares what kiln renders for each Argo CD
// Application (discover/argocd) with what Argo CD's own repo-server
// generates for it (github.com/argoproj/argo-cd/v3 reposerver/repository
// GenerateManifests), on the fixtures of discover/argocd and on
// ../shared/gitops/argocd-example-apps. It is a module of its own so that
// kiln's go.mod needs neither Argo CD nor Go 1.27.
package reference

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/argoproj/argo-cd/v3/pkg/apis/application/v1alpha1"
	"github.com/argoproj/argo-cd/v3/reposerver/apiclient"
	"github.com/argoproj/argo-cd/v3/reposerver/repository"
	"github.com/argoproj/argo-cd/v3/util/git"
	utilio "github.com/argoproj/argo-cd/v3/util/io"
	"github.com/kilnhq/kiln/discover"
	"github.com/kilnhq/kiln/discover/argocd"
	"github.com/kilnhq/kiln/discover/charts"
	"github.com/kilnhq/kiln/manifest"
	log "github.com/sirupsen/logrus"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// repoURLs are the URLs of the repositories compared: the one the
// fixtures of discover/argocd name, and argocd-example-apps'.
var repoURLs = []string{"https://git.example.com/team/deploy.git", "https://github.com/argoproj/argocd-example-apps.git"}

// thisRepository reports whether a source reads the repository compared
// (Argo CD's URL normalization).
func thisRepository(url string) bool {
	for _, u := range repoURLs {
		if git.NormalizeGitURL(u) == git.NormalizeGitURL(url) {
			return true
		}
	}
	return false
}

// tree is a repository whose Applications are compared.
type tree struct {
	name, dir string
}

// trees are the fixtures of discover/argocd (each a repository of its
// own) and ../shared/gitops/argocd-example-apps ($KILN_GITOPS_DIR).
func trees(t *testing.T) []tree {
	t.Helper()
	fixtures, err := os.ReadDir(filepath.Join("..", "testdata"))
	if err != nil {
		t.Fatalf("no fixtures: %v", err)
	}
	var out []tree
	for _, f := range fixtures {
		if f.IsDir() && f.Name() != "gen" { // gen holds a generator script, not a tree
			out = append(out, tree{name: f.Name(), dir: filepath.Join("..", "testdata", f.Name())})
		}
	}
	gitops := os.Getenv("KILN_GITOPS_DIR")
	if gitops == "" {
		gitops = filepath.Join("..", "..", "..", "..", "shared", "gitops")
	}
	if d := filepath.Join(gitops, "argocd-example-apps"); exists(d) {
		out = append(out, tree{name: "argocd-example-apps", dir: d})
	} else if os.Getenv("CI") == "true" {
		t.Fatalf("argocd-example-apps is not at %s (KILN_GITOPS_DIR)", d)
	}
	for i := range out {
		abs, err := filepath.Abs(out[i].dir)
		if err != nil {
			t.Fatal(err)
		}
		out[i].dir = abs // each tree is compared from a copy, in its own working directory
	}
	return out
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

// tools puts helm v4.3.2 and kustomize v5 first on PATH, as the
// repo-server runs them (Argo CD 3.6.2 ships helm 4.3.2 and kustomize
// 5.8.3; kiln links kustomize 5.8.1's API, the one .ci/run installs).
func tools(t *testing.T) {
	t.Helper()
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		home, _ := os.UserHomeDir()
		cache = filepath.Join(home, ".cache")
	}
	helmDir := filepath.Join(cache, "kiln", "tools", "helm-v4.3.2")
	t.Setenv("PATH", helmDir+string(os.PathListSeparator)+os.Getenv("PATH"))
	for _, tool := range [][]string{{"helm", "version", "--short"}, {"kustomize", "version"}} {
		out, err := exec.Command(tool[0], tool[1:]...).CombinedOutput()
		// helm built with go install says v4.3 (its version is set by
		// its release build's ldflags); the path says v4.3.2.
		want := map[string]string{"helm": "v4.3", "kustomize": "v5."}[tool[0]]
		if err != nil || !strings.Contains(string(out), want) {
			msg := fmt.Sprintf("%s %s is not installed (.ci/run installs it): %v %s", tool[0], want, err, out)
			if os.Getenv("CI") == "true" {
				t.Fatal(msg)
			}
			t.Skip(msg)
		}
	}
}

// result is one source of one Application compared.
type result struct {
	key  string // tree/Application[/source N]
	diff []string
	// refused holds why each refuses it when neither renders it (Argo CD's
	// error, kiln's error or warning).
	refused []string
}

// named are the differences kiln has with Argo CD on these trees, each by
// the source it shows on and why. A difference not named here fails the
// test, and so does a name here with no difference left.
var named = map[string]string{
	"directory/dir":  jsonnet,
	"directory/flat": jsonnet,
	"argocd-example-apps/example.jsonnet-guestbook":     jsonnet,
	"argocd-example-apps/example.jsonnet-guestbook-tla": jsonnet,
}

const jsonnet = "Jsonnet: the repo-server evaluates the path's *.jsonnet files (go-jsonnet); kiln evaluates no Jsonnet and says so in one warning naming the files"

func init() {
	// The repo-server logs each command it runs: not this test's output.
	log.SetOutput(io.Discard)
	os.Setenv("ARGOCD_LOG_LEVEL", "error") // its exec tracer's own logger
}

// TestReference renders every Application of every tree with kiln and with
// Argo CD's GenerateManifests, and compares the objects of each source.
func TestReference(t *testing.T) {
	tools(t)
	var results []result
	for _, tr := range trees(t) {
		results = append(results, compareTree(t, tr)...)
	}
	seen := map[string]bool{}
	equal, refused := 0, 0
	for _, r := range results {
		seen[r.key] = true
		switch {
		case len(r.refused) > 0:
			refused++
			t.Logf("neither renders: %s:\n  %s", r.key, strings.Join(r.refused, "\n  "))
		case len(r.diff) == 0 && named[r.key] != "":
			t.Errorf("%s: named as a difference (%s), but kiln and Argo CD now agree", r.key, named[r.key])
		case len(r.diff) == 0:
			equal++
			t.Logf("equal: %s", r.key)
		case named[r.key] != "":
			t.Logf("named difference: %s: %s\n  %s", r.key, named[r.key], strings.Join(r.diff, "\n  "))
		default:
			t.Errorf("%s: kiln and Argo CD differ:\n  %s", r.key, strings.Join(r.diff, "\n  "))
		}
	}
	for k := range named {
		if !seen[k] {
			t.Errorf("%s is named as a difference but was not compared", k)
		}
	}
	t.Logf("%d sources compared: %d equal, %d rendered by neither, %d named differences", len(results), equal, refused, len(results)-equal-refused)
}

// compareTree renders a tree with kiln's Argo CD controller, then each
// source of each Application it rendered with Argo CD.
func compareTree(t *testing.T, tr tree) []result {
	t.Helper()
	abs, err := filepath.Abs(tr.dir)
	if err != nil {
		t.Fatal(err)
	}
	repo := t.TempDir()
	if err := os.CopyFS(repo, os.DirFS(abs)); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(repo, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(repo)
	c := &argocd.Controller{RepoURLs: repoURLs}
	discover.Discover([]string{"."}, discover.Options{Controllers: []discover.Controller{c}, Charts: &charts.Cache{Dir: t.TempDir()}})
	var out []result
	for _, a := range c.Apps {
		var app v1alpha1.Application
		content, err := a.Object.Content()
		if err != nil {
			t.Fatal(err)
		}
		data, _ := json.Marshal(content)
		if err := json.Unmarshal(data, &app); err != nil {
			t.Fatalf("%s: Application %s: %v", tr.name, a.Name, err)
		}
		srcs := app.Spec.GetSources()
		for i := range srcs {
			key := tr.name + "/" + a.Name
			if len(srcs) > 1 {
				key += fmt.Sprintf("/source %d", i)
			}
			var unit *discover.Unit
			for j, u := range a.Units {
				if a.SourceOf[j] == i {
					unit = u
				}
			}
			if skip := skipped(a, srcs[i]); skip != "" {
				t.Logf("not compared: %s: %s", key, skip)
				continue
			}
			r := compareSource(t, abs, &app, srcs, i, unit)
			r.key = key
			out = append(out, r)
		}
	}
	return out
}

// skipped says why a source is not compared: Argo CD would need the
// network, another repository or a plugin's sidecar.
func skipped(a *argocd.Rendered, src v1alpha1.ApplicationSource) string {
	switch {
	case src.IsRef() && src.Path == "":
		return "a source of values only ($ref), rendered with the source that reads them"
	case src.Chart != "":
		return "a chart of a Helm repository: Argo CD downloads it (the reference runs offline); kiln's chart cache is tested in discover/argocd (testdata/chart)"
	case !thisRepository(src.RepoURL):
		return "another repository: kiln reads this repository only (one warning)"
	case slices.ContainsFunc(a.Plugins, func(p argocd.PluginRun) bool { return p.Path == src.Path }):
		return "kiln's own config management plugin: Argo CD runs it in its sidecar (compared with `kiln argocd generate` by cmd/kiln's TestArgoPluginMatchesLint)"
	case src.Plugin != nil:
		return "a config management plugin: Argo CD runs it in its sidecar; kiln renders none but its own (one warning)"
	}
	return ""
}

// compareSource runs Argo CD's GenerateManifests for source i, on a copy
// of the tree of its own (the repo-server runs `kustomize edit` in the
// path, which changes the kustomization), and compares its objects with
// what kiln rendered (unit; nil when it rendered nothing).
func compareSource(t *testing.T, tree string, app *v1alpha1.Application, srcs v1alpha1.ApplicationSources, i int, unit *discover.Unit) result {
	t.Helper()
	src := srcs[i].DeepCopy()
	repo := t.TempDir()
	if err := os.CopyFS(repo, os.DirFS(tree)); err != nil {
		t.Fatal(err)
	}
	paths := utilio.NewRandomizedTempPaths(t.TempDir())
	refs := map[string]*v1alpha1.RefTarget{}
	for _, s := range srcs {
		paths.Add(git.NormalizeGitURL(s.RepoURL), repo)
		if s.Ref != "" {
			refs["$"+s.Ref] = &v1alpha1.RefTarget{Repo: v1alpha1.Repository{Repo: s.RepoURL}, TargetRevision: s.TargetRevision}
		}
	}
	q := &apiclient.ManifestRequest{
		Repo:               &v1alpha1.Repository{Repo: src.RepoURL},
		AppName:            app.Name,
		Namespace:          app.Spec.Destination.Namespace,
		ApplicationSource:  src,
		KustomizeOptions:   &v1alpha1.KustomizeOptions{},
		KubeVersion:        manifest.LatestKube.String() + ".0",
		HasMultipleSources: len(srcs) > 1,
		RefSources:         refs,
		ProjectName:        "default",
		ProjectSourceRepos: []string{"*"},
	}
	appPath := filepath.Join(repo, filepath.FromSlash(src.Path))
	res, err := repository.GenerateManifests(t.Context(), appPath, repo, "HEAD", q, false, &git.NoopCredsStore{}, resource.MustParse("0"), paths)
	var kiln []*manifest.Object
	var kilnErrs []error
	if unit != nil {
		kiln, kilnErrs = unit.Source.Objects, unit.Source.Errs
	}
	if err != nil {
		if len(kiln) == 0 {
			why := "kiln renders nothing (a warning)"
			if len(kilnErrs) > 0 {
				why = "kiln: " + kilnErrs[0].Error()
			}
			return result{refused: []string{"Argo CD: " + err.Error(), why}}
		}
		return result{diff: []string{"Argo CD fails: " + err.Error() + fmt.Sprintf("; kiln renders %d objects", len(kiln))}}
	}
	if len(kilnErrs) > 0 {
		return result{diff: []string{fmt.Sprintf("Argo CD renders %d objects; kiln fails: %v", len(res.Manifests), kilnErrs[0])}}
	}
	argo := map[string]string{}
	for _, m := range res.Manifests {
		obj := map[string]any{}
		if err := json.Unmarshal([]byte(m), &obj); err != nil {
			t.Fatal(err)
		}
		destinationNamespace(obj, app.Spec.Destination.Namespace)
		argo[identity(obj)] = canonical(obj)
	}
	ours := map[string]string{}
	for _, o := range kiln {
		if createdNamespace(o, app) {
			continue
		}
		c, err := o.Content()
		if err != nil {
			t.Fatal(err)
		}
		ours[identity(c)] = canonical(c)
	}
	return result{diff: compare(argo, ours)}
}

// destinationNamespace puts the destination namespace on a namespaced
// built-in object without one, as Argo CD's controller does when it
// applies what the repo-server generated (kiln does it in rendering).
func destinationNamespace(obj map[string]any, ns string) {
	md, _ := obj["metadata"].(map[string]any)
	if ns == "" || md == nil || md["namespace"] != nil && md["namespace"] != "" {
		return
	}
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return
	}
	if r, ok := manifest.BuiltinKinds().Lookup(gv.WithKind(kind)); ok && r.Namespaced && !r.CRD {
		md["namespace"] = ns
	}
}

// createdNamespace reports whether o is the Namespace kiln adds for an
// Application with CreateNamespace=true and managedNamespaceMetadata: Argo
// CD's controller creates it, not the repo-server.
func createdNamespace(o *manifest.Object, app *v1alpha1.Application) bool {
	sp := app.Spec.SyncPolicy
	return o.Kind == "Namespace" && o.Name == app.Spec.Destination.Namespace && sp != nil && sp.ManagedNamespaceMetadata != nil &&
		sp.SyncOptions.HasOption("CreateNamespace=true")
}

func identity(obj map[string]any) string {
	md, _ := obj["metadata"].(map[string]any)
	return fmt.Sprintf("%v %v %v/%v", obj["apiVersion"], obj["kind"], md["namespace"], md["name"])
}

func canonical(obj map[string]any) string {
	data, _ := json.Marshal(obj)
	return string(data)
}

// compare names each object one side has and the other lacks, and each
// object whose content differs (with its first differing field).
func compare(argo, kiln map[string]string) []string {
	var diff []string
	keys := map[string]bool{}
	for k := range argo {
		keys[k] = true
	}
	for k := range kiln {
		keys[k] = true
	}
	sorted := make([]string, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	for _, k := range sorted {
		a, inArgo := argo[k]
		b, inKiln := kiln[k]
		switch {
		case !inKiln:
			diff = append(diff, "only Argo CD renders "+k)
		case !inArgo:
			diff = append(diff, "only kiln renders "+k)
		case a != b:
			var am, bm any
			_ = json.Unmarshal([]byte(a), &am)
			_ = json.Unmarshal([]byte(b), &bm)
			diff = append(diff, k+" differs at "+firstDiff("", am, bm))
		}
	}
	return diff
}

// firstDiff is the path of the first field where a and b differ, with
// both values.
func firstDiff(path string, a, b any) string {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok && bok {
		var keys []string
		for k := range am {
			keys = append(keys, k)
		}
		for k := range bm {
			if _, ok := am[k]; !ok {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			if !reflect.DeepEqual(am[k], bm[k]) {
				return firstDiff(path+"."+k, am[k], bm[k])
			}
		}
	}
	as, aok := a.([]any)
	bs, bok := b.([]any)
	if aok && bok && len(as) == len(bs) {
		for i := range as {
			if !reflect.DeepEqual(as[i], bs[i]) {
				return firstDiff(fmt.Sprintf("%s[%d]", path, i), as[i], bs[i])
			}
		}
	}
	short := func(v any) string {
		s := fmt.Sprintf("%v", v)
		if len(s) > 120 {
			s = s[:120] + "…"
		}
		return s
	}
	return fmt.Sprintf("%s: Argo CD %s, kiln %s", path, short(a), short(b))
}
