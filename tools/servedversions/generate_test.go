package main

import (
	"io"
	"strings"
	"testing"

	"github.com/kilnhq/kiln/internal/golden"
)

// TestGenerate reads the miniature sources under testdata (see its
// README.md) as Kubernetes 1.30 and 1.31 and compares the table with
// testdata/generated.golden: at 1.30 the beta version is off (the old
// ResourceConfig lets a disabled version disable its legacy resource) and
// v1 Gadget waits for its feature gate; at 1.31 the legacy beta resources
// are on, the gate too, but the beta Widget has expired.
func TestGenerate(t *testing.T) {
	releases := []release{
		{Minor: 30, Kube: "testdata/kube", APIServer: "testdata/apiserver-old"},
		{Minor: 31, Kube: "testdata/kube", APIServer: "testdata/apiserver-new", API: "testdata/api"},
	}
	var log strings.Builder
	got, err := generate(releases, &log)
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "testdata/generated.golden", got)
	for _, want := range []string{
		"1.30: widgets.example.io/v1beta1 sprockets (testdata/kube/pkg/registry/widgets/rest/storage_widgets.go:60:3): condition taken as true: err != nil",
		"1.31: widgets.example.io/v1beta1 Widget: registered, but k8s.io/api marks it removed in 1.31",
	} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("log:\n%s\nwant a line containing %q", log.String(), want)
		}
	}
}

// TestGenerateErrors: sources the generator cannot follow are errors, not
// a table that silently leaves kinds out.
func TestGenerateErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    release
		want string
	}{
		{"no sources", release{Minor: 30, Kube: "testdata/none", APIServer: "testdata/apiserver-old"}, "swagger.json"},
		{"no ResourceConfig", release{Minor: 30, Kube: "testdata/kube", APIServer: "testdata/kube"}, "no Go files"},
		{"no removals", release{Minor: 31, Kube: "testdata/kube", APIServer: "testdata/apiserver-new", API: "testdata/kube"}, "no zz_generated.prerelease-lifecycle.go"},
	} {
		if _, err := generate([]release{tc.r}, io.Discard); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want one containing %q", tc.name, err, tc.want)
		}
	}
	if _, err := generate(nil, io.Discard); err == nil {
		t.Error("no release: no error")
	}
	if _, err := span([]int{20, 21, 23}); err == nil || !strings.Contains(err.Error(), "1.20, 1.21, 1.23") {
		t.Errorf("span with a gap: err = %v", err)
	}
}
