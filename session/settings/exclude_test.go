package settings

import "testing"

// TestExcluded: exclude globs match slash-separated paths relative to the
// config file's directory; * stays in a segment, ** crosses them, and a
// directory excludes what is under it.
func TestExcluded(t *testing.T) {
	const globs = `exclude: ["vendor/**", "charts/*/tests", "**/*.gen.yaml", "single.yaml"]`
	for _, tt := range []struct {
		config string
		want   map[string]bool
	}{
		{".kiln.yaml", map[string]bool{
			"vendor/a/b.yaml":        true,
			"charts/x/tests/t.yaml":  true,
			"charts/x/y/tests/t.yml": false,
			"deep/dir/a.gen.yaml":    true,
			"a.gen.yaml":             true,
			"single.yaml":            true,
			"./single.yaml":          true,
			"sub/single.yaml":        false,
			"app/deploy.yaml":        false,
		}},
		{"repo/.kiln.yaml", map[string]bool{
			"repo/vendor/a.yaml":     true,
			"repo/single.yaml":       true,
			"single.yaml":            true, // outside the config's directory: matched as given
			"other/vendor/a.yaml":    false,
			"repo/app/deploy.yaml":   false,
			"repo/charts/x/tests/t":  true,
			"repo/charts/x/tests2/t": false,
		}},
	} {
		s, err := parse(tt.config, []byte(globs))
		if err != nil {
			t.Fatal(err)
		}
		for path, want := range tt.want {
			if got := s.Excluded(path); got != want {
				t.Errorf("config %s: Excluded(%q) = %v, want %v", tt.config, path, got, want)
			}
		}
	}
	if New().Excluded("vendor/a.yaml") {
		t.Error("no exclude setting excluded a file")
	}
}
