package discover

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/kilnhq/kiln/manifest"
)

// TestChartOutputSplitAsHelmSplitsIt renders testdata/charts/split, whose
// "---" separators are glued to a trimmed action and a comment
// (`---# comment`) or to an action (`---{{ if }}`): helm template splits
// them into three ConfigMaps, so kiln must too, each at its template line.
func TestChartOutputSplitAsHelmSplitsIt(t *testing.T) {
	res := Discover([]string{"testdata/charts/split"}, Options{KubeVersion: manifest.LatestKube})
	u := unitByDir(t, res, "testdata/charts/split")
	if len(u.Source.Errs) > 0 {
		t.Fatalf("render errors: %v", u.Source.Errs)
	}
	tests := []struct{ kind, name, field, want string }{
		{"ConfigMap", "first", "metadata.name", "configmaps.yaml:9:3"},
		{"ConfigMap", "second", "metadata.name", "configmaps.yaml:15:3"},
		{"ConfigMap", "third", "metadata.name", "configmaps.yaml:22:3"},
		{"Pod", "web", "spec.containers[0].image", "pod.yaml:8:7"},
	}
	if len(u.Source.Objects) != len(tests) {
		t.Errorf("%d objects, want %d (helm template's)", len(u.Source.Objects), len(tests))
	}
	for _, tt := range tests {
		o := objectByName(t, u, tt.kind, tt.name)
		got := filepath.ToSlash(o.Locate(tt.field).String())
		if !strings.HasSuffix(got, "/templates/"+tt.want) {
			t.Errorf("%s %s: Locate(%s) = %s, want templates/%s", tt.kind, tt.name, tt.field, got, tt.want)
		}
	}
}

// TestRenderedPositionsAreNeverLineZero: a field a helper renders cannot be
// traced to a template line; it points at its nearest traced parent, both
// for findings (Locate) and for reading notes (a YAML 1.1 octal).
func TestRenderedPositionsAreNeverLineZero(t *testing.T) {
	res := Discover([]string{"testdata/charts/split"}, Options{KubeVersion: manifest.LatestKube})
	pod := objectByName(t, unitByDir(t, res, "testdata/charts/split"), "Pod", "web")
	if _, err := pod.Content(); err != nil {
		t.Fatal(err)
	}
	notes := pod.Notes()
	if len(notes) != 1 || notes[0].Rule != manifest.NoteImplicitType {
		t.Fatalf("notes = %+v, want the one on defaultMode: 0644", notes)
	}
	// The helper's lines sit under `volumes:` (pod.yaml line 9).
	if p := notes[0].Pos; p.Line != 9 || p.Column == 0 {
		t.Errorf("note at %d:%d, want line 9 (volumes:), never 0", p.Line, p.Column)
	}
	if p := pod.Locate("spec.volumes[0].configMap.defaultMode"); p.Line != 9 {
		t.Errorf("Locate(defaultMode) = %s, want line 9", p)
	}
}

func TestSplitRendered(t *testing.T) {
	tests := []struct {
		name, out string
		want      []renderedDoc
	}{
		{"plain", "a: 1\n---\nb: 2\n", []renderedDoc{{"a: 1", 1, 1}, {"b: 2", 3, 1}}},
		{"glued comment", "---# c\nkind: X\n", []renderedDoc{{"# c\nkind: X", 1, 4}}},
		{"glued on a later line", "a: 1\n---b: 2\n", []renderedDoc{{"a: 1", 1, 1}, {"b: 2", 2, 4}}},
		{"blank lines and leading space", "\n\n  a: 1\n---\n\n\nb: é\n---\nc: 3", []renderedDoc{{"a: 1", 3, 3}, {"b: é", 7, 1}, {"c: 3", 9, 1}}},
		{"a document repeated", "a: 1\n---\na: 1\n", []renderedDoc{{"a: 1", 1, 1}, {"a: 1", 3, 1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := splitRendered(tt.out)
			if len(got) != len(tt.want) {
				t.Fatalf("split = %+v, want %+v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("doc %d = %+v, want %+v", i, got[i], tt.want[i])
				}
			}
		})
	}
}
