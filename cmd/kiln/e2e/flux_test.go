package e2e

import (
	"encoding/json"
	"path/filepath"
	"testing"
)

// TestFluxKustomization lints a Flux Kustomization's folder: what it
// renders is judged and named in the findings ("via"), and the
// Kustomization's kiln.dev/ignore silences those findings without being
// reported unused on the Kustomization itself.
func TestFluxKustomization(t *testing.T) {
	dir := filepath.Join(repoRoot, "discover", "flux", "testdata", "ignore")
	// Judged with kiln's defaults: the repository's .kiln.yaml above the
	// fixture leaves testdata out of `kiln lint .`.
	none := noConfig(t)
	r := runIn(t, dir, nil, kilnBin, "lint", "--config", none, "-f", "json", "--show-suppressed", ".")
	var out struct {
		Findings []struct {
			Rule, Via, File string
		}
		Summary struct {
			Suppressed         int
			FluxKustomizations int
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("kiln lint -f json: %v\n%s\n%s", err, r.stdout, r.stderr)
	}
	if out.Summary.FluxKustomizations != 1 {
		t.Errorf("fluxKustomizations = %d, want 1", out.Summary.FluxKustomizations)
	}
	if out.Summary.Suppressed != 2 {
		t.Errorf("suppressed = %d, want 2 (psa/runAsNonRoot and psa/seccompProfile_restricted, by the Kustomization's kiln.dev/ignore)", out.Summary.Suppressed)
	}
	psa := 0
	for _, f := range out.Findings {
		switch {
		case f.Rule == "kiln/unused-ignore":
			t.Errorf("the Kustomization's kiln.dev/ignore is reported unused at %s", f.File)
		case f.File == "apps/web.yaml":
			psa++
			if f.Via != "Kustomization flux-system/apps" {
				t.Errorf("%s on %s: via %q, want Kustomization flux-system/apps", f.Rule, f.File, f.Via)
			}
		}
	}
	if psa == 0 {
		t.Errorf("no finding on the Deployment the Kustomization renders:\n%s", r.stdout)
	}
}
