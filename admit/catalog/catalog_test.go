package catalog

import (
	"slices"
	"strings"
	"testing"
)

// TestIndex: every CRD the index lists is in its file under its name, of
// its group and kind, serving the versions listed; the static group list
// is the index's groups.
func TestIndex(t *testing.T) {
	ix, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	groups := map[string]bool{}
	for _, e := range ix.Entries {
		if len(e.CRDs) == 0 {
			t.Errorf("%s: no CRDs", e)
		}
		for _, c := range e.CRDs {
			groups[c.Group] = true
			m, err := c.Content()
			if err != nil {
				t.Fatalf("%s %s: %v", e, c.Name(), err)
			}
			spec, _ := m["spec"].(map[string]any)
			names, _ := spec["names"].(map[string]any)
			if spec["group"] != c.Group || names["kind"] != c.Kind || m["kind"] != "CustomResourceDefinition" {
				t.Errorf("%s %s: file holds group %v kind %v", e, c.Name(), spec["group"], names["kind"])
			}
			if d := schemaDescriptions(m); d > 0 {
				t.Errorf("%s %s: %d schema descriptions kept", e, c.Name(), d)
			}
			if len(mustJSON(t, c)) == 0 {
				t.Errorf("%s %s: empty", e, c.Name())
			}
		}
	}
	var want []string
	for g := range groups {
		want = append(want, g)
	}
	slices.Sort(want)
	if !slices.Equal(want, groupNames[:]) {
		t.Errorf("groupNames = %v, the index's groups are %v: run go generate ./catalog", groupNames, want)
	}
	for _, g := range []string{"helm.toolkit.fluxcd.io", "cert-manager.io", "gateway.networking.k8s.io"} {
		if !HasGroup(g) {
			t.Errorf("HasGroup(%q) = false", g)
		}
	}
	for _, g := range []string{"", "apps", "example.com", "zzz.io"} {
		if HasGroup(g) {
			t.Errorf("HasGroup(%q) = true", g)
		}
	}
}

// schemaDescriptions counts the descriptions in the CRD's schemas: the
// schema root's and its properties', down the tree.
func schemaDescriptions(crd map[string]any) int {
	n := 0
	var walk func(s map[string]any)
	walk = func(s map[string]any) {
		if _, ok := s["description"].(string); ok {
			n++
		}
		props, _ := s["properties"].(map[string]any)
		for _, p := range props {
			if ps, ok := p.(map[string]any); ok {
				walk(ps)
			}
		}
		if items, ok := s["items"].(map[string]any); ok {
			walk(items)
		}
	}
	spec, _ := crd["spec"].(map[string]any)
	versions, _ := spec["versions"].([]any)
	for _, v := range versions {
		vm, _ := v.(map[string]any)
		sch, _ := vm["schema"].(map[string]any)
		if root, ok := sch["openAPIV3Schema"].(map[string]any); ok {
			walk(root)
		}
	}
	return n
}

func mustJSON(t *testing.T, c *CRD) []byte {
	t.Helper()
	b, err := c.JSON()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestChoose: the default version, a pinned one, and a kind only a later
// version (the experimental channel) holds.
func TestChoose(t *testing.T) {
	ix, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		group, kind string
		pins        map[string]string
		want        string // entry, "" for none
	}{
		{"helm.toolkit.fluxcd.io", "HelmRelease", nil, "flux v2.9.5"},
		{"helm.toolkit.fluxcd.io", "HelmRelease", map[string]string{"flux": "v2.7.5"}, "flux v2.7.5"},
		{"helm.toolkit.fluxcd.io", "HelmRelease", map[string]string{"cert-manager": "v1.21.2"}, "flux v2.9.5"},
		{"gateway.networking.k8s.io", "HTTPRoute", nil, "gateway-api v1.7.0"},
		{"gateway.networking.k8s.io", "HTTPRoute", map[string]string{"gateway-api": "v1.7.0-experimental"}, "gateway-api v1.7.0-experimental"},
		{"gateway.networking.x-k8s.io", "XMesh", nil, "gateway-api v1.7.0-experimental"},
		{"cert-manager.io", "Certificate", nil, "cert-manager v1.21.2"},
		{"cert-manager.io", "Gizmo", nil, ""},
		{"example.com", "Gizmo", nil, ""},
	}
	for _, tc := range cases {
		c, ok := ix.Choose(tc.group, tc.kind, tc.pins)
		got := ""
		if ok {
			got = c.Entry.String()
		}
		if got != tc.want {
			t.Errorf("Choose(%s, %s, %v) = %q, want %q", tc.group, tc.kind, tc.pins, got, tc.want)
		}
	}
}

func TestCheckPins(t *testing.T) {
	ix, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		pins map[string]string
		want string // "" for no error
	}{
		{map[string]string{"flux": "v2.8.8", "gateway-api": "v1.7.0-experimental"}, ""},
		{map[string]string{"flux": "v2.0.0"}, "the catalog holds flux v2.9.5, v2.8.8, v2.7.5, not v2.0.0"},
		{map[string]string{"fluxcd": "v2.9.5"}, `the catalog holds no project "fluxcd"`},
	}
	for _, tc := range cases {
		err := ix.CheckPins(tc.pins)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if !strings.HasPrefix(got, tc.want) || (tc.want == "") != (got == "") {
			t.Errorf("CheckPins(%v) = %q, want %q", tc.pins, got, tc.want)
		}
	}
}

// TestReadsOnlyWhatIsAsked: a CRD's file is decompressed once, and only
// its own.
func TestReadsOnlyWhatIsAsked(t *testing.T) {
	ix, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	c, _ := ix.Choose("bitnami.com", "SealedSecret", nil)
	before := Reads()
	for range 3 {
		if _, err := c.Content(); err != nil {
			t.Fatal(err)
		}
	}
	if n := Reads() - before; n > 1 {
		t.Errorf("%d reads for one file asked for three times", n)
	}
}
