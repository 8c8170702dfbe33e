package flux_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kilnhq/kiln/discover"
	"github.com/kilnhq/kiln/discover/flux"
	"sigs.k8s.io/yaml"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// render runs discovery with the Flux controller in dir (as the working
// directory, the lint root ".") and says what it built: each
// Kustomization, its objects with where they are written, the warnings
// and the plain files left.
func render(t *testing.T, dir string, sources map[string]string) string {
	t.Helper()
	t.Chdir(dir)
	c := &flux.Controller{Sources: sources}
	res := discover.Discover([]string{"."}, discover.Options{Controllers: []discover.Controller{c}})
	var b strings.Builder
	for _, bl := range c.Builds {
		fmt.Fprintf(&b, "Kustomization %s (%s:%d) builds %s\n", bl.Name(), bl.Pos.File, bl.Pos.Line, bl.Dir)
		for _, e := range bl.Unit.Source.Errs {
			fmt.Fprintf(&b, "  error: %v\n", e)
		}
		for _, o := range bl.Unit.Source.Objects {
			content, err := o.Content()
			if err != nil {
				t.Fatal(err)
			}
			y, err := yaml.Marshal(content)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&b, "  %s %s/%s at %s (unit %s)\n", o.Kind, o.Namespace, o.Name, o.Pos(), o.Unit)
			for _, l := range strings.Split(strings.TrimSpace(string(y)), "\n") {
				fmt.Fprintf(&b, "    %s\n", l)
			}
		}
	}
	for _, u := range res.Units {
		if u.Kind != flux.UnitKind {
			fmt.Fprintf(&b, "%s unit %s\n", u.Kind, u.Dir)
		}
	}
	for _, f := range res.Files {
		fmt.Fprintf(&b, "file %s\n", f)
	}
	for _, w := range res.Warnings {
		fmt.Fprintf(&b, "%v\n", w)
	}
	for _, e := range res.Errs {
		fmt.Fprintf(&b, "input error: %v\n", e)
	}
	return b.String()
}

func TestRender(t *testing.T) {
	cases := []struct {
		name    string
		sources map[string]string
	}{
		// postBuild: substitute over substituteFrom, a ConfigMap's values, a
		// SOPS Secret's left as written (said once), defaults, a missing
		// variable (empty, as kustomize-controller substitutes), an object
		// with substitution disabled.
		{name: "subst"},
		// A root Kustomization whose patches change its child; the child's
		// build outputs the root again (built once).
		{name: "parent"},
		// A source kiln cannot resolve: one warning, the rest built.
		{name: "missing"},
		// The same, mapped with flux.sources.
		{name: "missing", sources: map[string]string{"OCIRepository/flux-system/vendor-manifests": "clusters"}},
	}
	for _, tc := range cases {
		golden := tc.name
		if tc.sources != nil {
			golden += "-mapped"
		}
		t.Run(golden, func(t *testing.T) {
			wd, _ := os.Getwd()
			got := render(t, filepath.Join("testdata", tc.name), tc.sources)
			path := filepath.Join(wd, "testdata", golden+".golden")
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Errorf("render of testdata/%s differs from %s (go test -update rewrites it):\n%s", tc.name, path, got)
			}
		})
	}
}
