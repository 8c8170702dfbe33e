package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/kilnhq/kiln/discover"
	"github.com/kilnhq/kiln/discover/argocd"
	"github.com/kilnhq/kiln/discover/charts"
	"github.com/kilnhq/kiln/manifest"
)

// pluginTrees are the trees whose Applications TestArgoPluginMatchesLint
// renders both ways: the Argo CD fixtures of discover/argocd, and
// ../shared/gitops/argocd-example-apps beside the repository
// ($KILN_GITOPS_DIR) when it is there.
func pluginTrees(t *testing.T) []string {
	t.Helper()
	fixtures, err := os.ReadDir(filepath.Join("..", "..", "discover", "argocd", "testdata"))
	if err != nil {
		t.Fatalf("no Argo CD fixtures: %v", err)
	}
	var trees []string
	for _, f := range fixtures {
		if f.IsDir() && f.Name() != "gen" {
			trees = append(trees, filepath.Join("..", "..", "discover", "argocd", "testdata", f.Name()))
		}
	}
	gitops := os.Getenv("KILN_GITOPS_DIR")
	if gitops == "" {
		gitops = filepath.Join("..", "..", "..", "shared", "gitops")
	}
	if _, err := os.Stat(filepath.Join(gitops, "argocd-example-apps")); err == nil {
		trees = append(trees, filepath.Join(gitops, "argocd-example-apps"))
	}
	return trees
}

// pluginEnv is the CMP environment Argo CD gives `kiln argocd generate`
// for a source: ARGOCD_APP_* (reposerver/repository's newEnv), each
// plugin env as ARGOCD_ENV_<name>, the parameters as the JSON of
// ARGOCD_APP_PARAMETERS. Judging never refuses the stream here
// (KILN_FAIL_ON never): the objects are compared, not the findings.
func pluginEnv(t *testing.T, run argocd.PluginRun) fakeEnv {
	t.Helper()
	env := fakeEnv{
		"ARGOCD_APP_NAME": run.Plugin.App, "ARGOCD_APP_NAMESPACE": run.Plugin.Namespace,
		"ARGOCD_APP_SOURCE_PATH": run.Path, "ARGOCD_APP_SOURCE_REPO_URL": run.RepoURL,
	}
	for k, v := range run.Plugin.Env {
		env["ARGOCD_ENV_"+k] = v
	}
	env["ARGOCD_ENV_KILN_FAIL_ON"] = "never"
	if len(run.Plugin.Parameters) > 0 {
		data, err := json.Marshal(run.Plugin.Parameters)
		if err != nil {
			t.Fatal(err)
		}
		env["ARGOCD_APP_PARAMETERS"] = string(data)
	}
	return env
}

// TestArgoPluginMatchesLint: for every source kiln's own plugin renders in
// lint (an Application naming plugin kiln, or whose path kiln's discover
// claims), `kiln argocd generate` run as Argo CD runs it (in the path,
// with the Application's CMP environment) prints exactly the objects
// lint judges for that source.
func TestArgoPluginMatchesLint(t *testing.T) {
	compared := 0
	for _, tree := range pluginTrees(t) {
		abs, err := filepath.Abs(tree)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(filepath.Base(tree), func(t *testing.T) {
			repo := t.TempDir()
			if err := os.CopyFS(repo, os.DirFS(abs)); err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Join(repo, ".git"), 0o755); err != nil {
				t.Fatal(err)
			}
			t.Chdir(repo)
			c := &argocd.Controller{RepoURLs: []string{"https://git.example.com/team/deploy.git"}}
			discover.Discover([]string{"."}, discover.Options{Controllers: []discover.Controller{c}, Charts: &charts.Cache{Dir: t.TempDir()}})
			for _, app := range c.Apps {
				for _, run := range app.Plugins {
					compared++
					var want bytes.Buffer
					if err := manifest.Write(&want, run.Objects); err != nil {
						t.Fatal(err)
					}
					t.Chdir(filepath.Join(repo, run.Dir))
					code, got, stderr := runArgo(t, ".", pluginEnv(t, run))
					if code != 0 {
						t.Errorf("Application %s: kiln argocd generate exits %d:\n%s", app.Name, code, stderr)
						continue
					}
					if got != want.String() {
						t.Errorf("Application %s (%s): the plugin's objects differ from lint's\nplugin:\n%s\nlint:\n%s", app.Name, run.Path, got, want.String())
					}
					if len(run.Objects) == 0 {
						t.Errorf("Application %s: nothing rendered", app.Name)
					}
				}
			}
		})
	}
	if compared < 4 {
		t.Errorf("%d sources of kiln's plugin compared, want the 4 of testdata/plugin at least", compared)
	}
}
