package session

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/kilnhq/kiln/rules"
)

// fluxUnitsTree is a Flux fleet of two clusters (Flux's layout: the roots
// of each in clusters/NAME/) from one repository:
//   - in staging, Kustomizations apps and infra both deploy ConfigMap
//     shared/settings: one cluster, two units, a duplicate;
//   - production's apps deploys the same ConfigMap into its own cluster:
//     not a duplicate of staging's;
//   - staging's apps deploys a HelmRelease whose chart (a path of this
//     repository) renders ConfigMap shop/twice from two templates: a
//     duplicate inside one unit;
//   - two ConfigMaps written with generateName only (a plain folder: Flux
//     refuses objects without a name) are never duplicates.
var fluxUnitsTree = map[string]string{
	"clusters/source.yaml": `apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {name: flux-system, namespace: flux-system}
spec: {interval: 1m, url: https://git.example/fleet, ref: {branch: main}}
`,
	"clusters/staging/apps.yaml": `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: apps, namespace: flux-system}
spec:
  interval: 10m
  path: ./apps/staging
  prune: true
  sourceRef: {kind: GitRepository, name: flux-system}
`,
	"clusters/staging/infra.yaml": `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: infra, namespace: flux-system}
spec:
  interval: 10m
  path: ./infra
  prune: true
  sourceRef: {kind: GitRepository, name: flux-system}
`,
	"clusters/production/apps.yaml": `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: apps, namespace: flux-system}
spec:
  interval: 10m
  path: ./apps/production
  prune: true
  sourceRef: {kind: GitRepository, name: flux-system}
`,
	"apps/staging/settings.yaml":    settingsCM,
	"apps/production/settings.yaml": settingsCM,
	"infra/settings.yaml":           settingsCM,
	"jobs/run.yaml": `apiVersion: v1
kind: ConfigMap
metadata: {generateName: run-, namespace: shop}
---
apiVersion: v1
kind: ConfigMap
metadata: {generateName: run-, namespace: shop}
`,
	"apps/staging/release.yaml": `apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: twice, namespace: shop}
spec:
  interval: 10m
  chart:
    spec:
      chart: ./charts/twice
      sourceRef: {kind: GitRepository, name: flux-system, namespace: flux-system}
`,
	"charts/twice/Chart.yaml":          "apiVersion: v2\nname: twice\nversion: 1.0.0\n",
	"charts/twice/templates/a.yaml":    twiceCM,
	"charts/twice/templates/b.yaml":    twiceCM,
	"charts/twice/templates/note.yaml": "# nothing\n",
}

const settingsCM = `apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: shared}
data: {level: info}
`

const twiceCM = `apiVersion: v1
kind: ConfigMap
metadata: {name: twice, namespace: shop}
data: {from: "{{ .Template.Name }}"}
`

// TestDuplicateUnits: object/duplicate within one unit (a HelmRelease's
// chart) and across the units of one cluster (two Flux Kustomizations of
// staging), never across clusters (staging and production) nor for
// generateName.
func TestDuplicateUnits(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, fluxUnitsTree)
	t.Chdir(root)
	r := mustLint(t, []string{"."}, nil)
	var got []string
	r.out.Result.Each(func(f rules.Finding) error {
		if f.Rule == "object/duplicate" {
			got = append(got, fmt.Sprintf("%s: %s", f.Pos, f.Message))
		}
		return nil
	})
	slices.Sort(got)
	if len(got) != 2 {
		t.Fatalf("object/duplicate findings:\n%s\nwant two: staging's settings across units, the chart's twice inside one", strings.Join(got, "\n"))
	}
	inside, cross := got[0], got[1] // charts/ sorts before infra/
	if !strings.HasPrefix(cross, "apps/staging/settings.yaml:") && !strings.HasPrefix(cross, "infra/settings.yaml:") ||
		!strings.Contains(cross, "deployed twice into one cluster") ||
		!strings.Contains(cross, "Kustomization flux-system/apps") || !strings.Contains(cross, "Kustomization flux-system/infra") {
		t.Errorf("across units: %s\nwant staging's settings, naming both Kustomizations", cross)
	}
	if !strings.HasPrefix(inside, "charts/twice/templates/b.yaml:") || !strings.Contains(inside, "charts/twice/templates/a.yaml:") ||
		!strings.Contains(inside, "is defined twice") {
		t.Errorf("inside one unit: %s\nwant the chart's second template, naming the first", inside)
	}
}

// TestReleaseGitSourceMapped: a HelmRelease's chart in a GitRepository
// that flux.sources maps to a folder is read there, by the one rule
// Flux Kustomizations follow (this repository is not guessed: the input
// declares two Git sources).
func TestReleaseGitSourceMapped(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		".kiln.yaml": "flux:\n  sources:\n    GitRepository/flux-system/vendor: vendor\n",
		"deploy/sources.yaml": `apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {name: fleet, namespace: flux-system}
spec: {interval: 1m, url: https://git.example/fleet, ref: {branch: main}}
---
apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {name: vendor, namespace: flux-system}
spec: {interval: 1m, url: https://git.example/vendor, ref: {branch: main}}
`,
		"deploy/release.yaml": `apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: web, namespace: shop}
spec:
  interval: 10m
  chart:
    spec:
      chart: ./charts/web
      sourceRef: {kind: GitRepository, name: vendor, namespace: flux-system}
`,
		"vendor/charts/web/Chart.yaml":       "apiVersion: v2\nname: web\nversion: 1.0.0\n",
		"vendor/charts/web/templates/a.yaml": twiceCM, // two copies: a finding that names the release
		"vendor/charts/web/templates/b.yaml": twiceCM,
	})
	t.Chdir(root)
	r := mustLint(t, []string{"deploy"}, nil)
	if !strings.Contains(r.json, `"via": "HelmRelease shop/web"`) {
		t.Fatalf("nothing names HelmRelease shop/web: its chart was not rendered\n%s", r.json)
	}
	if strings.Contains(r.json, "does not know to be this repository") {
		t.Errorf("the mapped GitRepository was not followed:\n%s", r.json)
	}
}
