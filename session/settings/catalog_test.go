package settings

import (
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestCatalogSettings: crds: (relative to the config) and catalog: (off,
// on, or versions pinned), and their mistakes at their line.
func TestCatalogSettings(t *testing.T) {
	tests := []struct {
		name, in string
		crds     []string
		off      bool
		pins     map[string]string
		err      string
	}{
		{"crds relative to the config", "crds: [crds/, /abs/chart/crds, cluster-crds.yaml]\n",
			[]string{filepath.Join("repo", "crds"), "/abs/chart/crds", filepath.Join("repo", "cluster-crds.yaml")}, false, nil, ""},
		{"catalog off", "catalog: false\n", nil, true, nil, ""},
		{"catalog on", "catalog: true\n", nil, false, nil, ""},
		{"versions pinned", "catalog:\n  flux: v2.7.5\n  gateway-api: v1.7.0-experimental\n", nil, false,
			map[string]string{"flux": "v2.7.5", "gateway-api": "v1.7.0-experimental"}, ""},
		{"a version not held", "catalog:\n  flux: v2.0.0\n", nil, false, nil,
			"repo/.kiln.yaml:2:3: catalog.flux: the catalog holds flux v2.9.5, v2.8.8, v2.7.5, not v2.0.0"},
		{"a project not held", "catalog: {fluxcd: v2.9.5}\n", nil, false, nil,
			`repo/.kiln.yaml:1:11: catalog.fluxcd: the catalog holds no project "fluxcd"`},
		{"neither a switch nor a mapping", "catalog: off\n", nil, false, nil,
			"repo/.kiln.yaml:1:10: catalog must be true, false or a mapping"},
		{"crds not a list", "crds: crds/\n", nil, false, nil, "repo/.kiln.yaml:1:7: crds must be a list of strings"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := parse(filepath.Join("repo", ".kiln.yaml"), []byte(tt.in))
			if tt.err != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.err) {
					t.Fatalf("error = %v, want prefix %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			o := s.Options()
			if !slices.Equal(o.CRDs, tt.crds) || o.CatalogOff != tt.off || !maps.Equal(o.CatalogVersions, tt.pins) {
				t.Errorf("options crds %v off %v pins %v; want %v %v %v", o.CRDs, o.CatalogOff, o.CatalogVersions, tt.crds, tt.off, tt.pins)
			}
		})
	}
}
