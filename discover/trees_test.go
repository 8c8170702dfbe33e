package discover

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/kilnhq/kiln/manifest"
)

// TestFilesBelowKustomizations decides each file of testdata/trees as
// kustomize and kubectl do: a file a build reads is linted through it; a
// patch nothing applies (unreferenced at any depth of a kustomization's
// tree, or named by a kustomization kiln skips) is skipped with why; a
// complete manifest no build reads is linted as kubectl apply -f applies it.
func TestFilesBelowKustomizations(t *testing.T) {
	res := Discover([]string{"testdata/trees"}, Options{KubeVersion: manifest.LatestKube})
	const lint = "lint"
	const through = "read by a build"
	tests := []struct {
		file   string
		want   string // lint, through, or the skip reason
		detail string // a substring of the skip's detail
	}{
		// kubebuilder: unreferenced CRD patches one folder below config/crd.
		{"operator/config/crd/patches/cainjection_in_widgets.yaml", ReasonPatch, "CustomResourceDefinition without spec.names, under testdata/trees/operator/config/crd/kustomization.yaml"},
		{"operator/config/crd/patches/webhook_in_widgets.yaml", ReasonPatch, "CustomResourceDefinition without spec.names"},
		{"operator/config/crd/bases/example.com_widgets.yaml", through, ""},
		// a patch whose entry is commented out, and a JSON 6902 list below.
		{"operator/config/default/manager_metrics_patch.yaml", ReasonPatch, "Deployment without spec.selector"},
		{"operator/config/default/patches/replicas.yaml", ReasonPatch, "a JSON 6902 patch"},
		{"operator/config/default/manager_auth_proxy_patch.yaml", through, ""},
		{"operator/config/manager/manager.yaml", through, ""},
		// a complete object beside a kustomization that does not read it.
		{"operator/config/rbac/widget_editor_role.yaml", lint, ""},
		// the documented kubectl create -f manifests beside a kustomization
		// for another platform, and a seed file (the reader skips it).
		{"examples/operator.yaml", lint, ""},
		{"examples/seed.yaml", lint, ""},
		{"examples/openshift-scc.yaml", through, ""},
		// an overlay kiln skips for its remote base: its patch and resource.
		{"remote/overlay/patches/delete-migration.yaml", ReasonPatch, "named as a patch in testdata/trees/remote/overlay/kustomization.yaml, which kiln does not build"},
		{"remote/overlay/local.yaml", ReasonRemoteInput, "testdata/trees/remote/overlay/kustomization.yaml"},
		// a kustomization that needs a plugin, and one kustomize refuses.
		{"plugin/service.yaml", ReasonPluginInput, "testdata/trees/plugin/kustomization.yaml"},
		{"plugin/generator.yaml", ReasonPluginInput, "testdata/trees/plugin/kustomization.yaml"},
		{"failing/configmap.yaml", ReasonFailedInput, "testdata/trees/failing/kustomization.yaml"},
		{"failing/missing-target.yaml", ReasonPatch, "named as a patch in testdata/trees/failing/kustomization.yaml, which kiln does not build"},
		// a Component nothing includes.
		{"component/rbac.yaml", ReasonComponentInput, "testdata/trees/component/kustomization.yaml"},
		{"component/patch.yaml", ReasonPatch, "named as a patch in testdata/trees/component/kustomization.yaml"},
	}
	files := map[string]bool{}
	for _, f := range res.Files {
		files[filepath.ToSlash(f)] = true
	}
	skipped := map[string]manifest.Skipped{}
	for _, s := range res.Skipped {
		skipped[filepath.ToSlash(s.Pos.File)] = s
	}
	for _, tt := range tests {
		path := "testdata/trees/" + tt.file
		s, isSkipped := skipped[path]
		got := through
		switch {
		case files[path]:
			got = lint
		case isSkipped:
			got = s.Reason
		}
		if got != tt.want {
			t.Errorf("%s: %q, want %q", tt.file, got, tt.want)
			continue
		}
		if isSkipped && !strings.Contains(filepath.ToSlash(s.Detail), tt.detail) {
			t.Errorf("%s: detail %q, want it to hold %q", tt.file, s.Detail, tt.detail)
		}
	}
	if got := strings.Join(unitDirs(res), ","); got != "kustomization:testdata/trees/examples,kustomization:testdata/trees/failing,kustomization:testdata/trees/operator/config/default,kustomization:testdata/trees/variant" {
		t.Errorf("units = %s", got)
	}
	// A partial object a build outputs (an overlay meant to be applied over
	// an install) is judged as the create kubectl apply -k sends: the server
	// refuses it.
	var kinds []string
	for _, o := range unitByDir(t, res, "testdata/trees/variant").Source.Objects {
		kinds = append(kinds, o.Kind)
	}
	if got := strings.Join(kinds, ","); got != "StatefulSet,Deployment" {
		t.Errorf("the overlay's judged objects are %s, want its partial StatefulSet and its Deployment", got)
	}
}

// TestKustomizeWarningsOnceEach: one warning per remote base however many
// kustomizations include it, and kustomize's deprecation lines as one
// warning per kustomization file at its first deprecated field.
func TestKustomizeWarningsOnceEach(t *testing.T) {
	res := Discover([]string{"testdata/trees"}, Options{KubeVersion: manifest.LatestKube})
	var got []string
	for _, w := range res.Warnings {
		got = append(got, filepath.ToSlash(w.Error()))
	}
	want := []string{
		"testdata/trees/plugin/kustomization.yaml:1:1: warning: this kustomization needs a plugin or KRM function (loading generator plugins: failed to load generator: external plugins disabled; unable to load external plugin 'SecretsFromVault'); " +
			"kiln runs no code from the repository, so it is skipped: lint its output instead (kustomize build --enable-alpha-plugins DIR | kiln lint -)",
		"testdata/trees/remote/base/kustomization.yaml:2:3: warning: remote base https://github.com/acme/widgets/releases/download/v1.0.0/install.yaml is not fetched (kiln works offline); " +
			"the 4 kustomizations that include it are skipped (testdata/trees/remote/base/kustomization.yaml, testdata/trees/remote/overlays/a/kustomization.yaml, testdata/trees/remote/overlays/b/kustomization.yaml, testdata/trees/remote/overlays/c/kustomization.yaml): vendor the base or lint their rendered output",
		"testdata/trees/remote/overlay/kustomization.yaml:2:3: warning: remote base github.com/acme/deploy//base?ref=v1.0.0 is not fetched (kiln works offline); this kustomization is skipped: vendor the base or lint its rendered output",
		"testdata/trees/operator/config/default/kustomization.yaml:3:1: warning: kustomize: the fields 'commonLabels' (use 'labels'), 'patchesStrategicMerge' (use 'patches') are deprecated; `kustomize edit fix` rewrites this kustomization",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
