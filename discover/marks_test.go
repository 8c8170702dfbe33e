package discover

import "testing"

func TestMarksOf(t *testing.T) {
	for _, tc := range []struct {
		data string
		want Marks
	}{
		{"apiVersion: v1\nkind: Service\n", 0},
		{"apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\n", MarkToolkit},
		{"apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\n", MarkToolkit | MarkHelmRelease},
		{"apiVersion: fluxcd.controlplane.io/v1\nkind: FluxInstance\n", MarkFluxExtra},
		{"apiVersion: source.extensions.fluxcd.io/v1beta1\nkind: ArtifactGenerator\n", MarkFluxExtra},
		{"apiVersion: v1\nkind: ConfigMap\n---\napiVersion: v1\nkind: Secret\n", MarkConfig},
	} {
		if got := MarksOf([]byte(tc.data)); got != tc.want {
			t.Errorf("MarksOf(%q) = %b, want %b", tc.data, got, tc.want)
		}
	}
}
