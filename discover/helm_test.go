package discover

import (
	"fmt"
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
// for findings (Locate) and for reading notes (a YAML 1.1 boolean).
func TestRenderedPositionsAreNeverLineZero(t *testing.T) {
	res := Discover([]string{"testdata/charts/split"}, Options{KubeVersion: manifest.LatestKube})
	pod := objectByName(t, unitByDir(t, res, "testdata/charts/split"), "Pod", "web")
	if _, err := pod.Content(); err != nil {
		t.Fatal(err)
	}
	notes := pod.Notes()
	if len(notes) != 1 || notes[0].Rule != manifest.NoteImplicitType {
		t.Fatalf("notes = %+v, want the one on optional: yes", notes)
	}
	// The helper's lines sit under `volumes:` (pod.yaml line 9).
	if p := notes[0].Pos; p.Line != 9 || p.Column == 0 {
		t.Errorf("note at %d:%d, want line 9 (volumes:), never 0", p.Line, p.Column)
	}
	if p := pod.Locate("spec.volumes[0].configMap.optional"); p.Line != 9 {
		t.Errorf("Locate(optional) = %s, want line 9", p)
	}
}

// TestSplitRendered: Helm 4's splitter keeps a document's trailing line
// break (Helm 3's trimmed it); positions are those of the rendered lines.
func TestSplitRendered(t *testing.T) {
	tests := []struct {
		name, out string
		want      []renderedDoc
	}{
		{"plain", "a: 1\n---\nb: 2\n", []renderedDoc{{"a: 1\n", 1, 1}, {"b: 2\n", 3, 1}}},
		{"glued comment", "---# c\nkind: X\n", []renderedDoc{{"# c\nkind: X\n", 1, 4}}},
		{"glued on a later line", "a: 1\n---b: 2\n", []renderedDoc{{"a: 1\n", 1, 1}, {"b: 2\n", 2, 4}}},
		{"blank lines and leading space", "\n\n  a: 1\n---\n\n\nb: é\n---\nc: 3", []renderedDoc{{"a: 1\n", 3, 3}, {"b: é\n", 7, 1}, {"c: 3", 9, 1}}},
		{"a document repeated", "a: 1\n---\na: 1\n", []renderedDoc{{"a: 1\n", 1, 1}, {"a: 1\n", 3, 1}}},
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

// TestChartThatNeedsValues: a chart whose values.schema.json or a required
// asks for values cannot render with its defaults, as helm template cannot;
// the error is where Helm says and names the setting that gives the values;
// with them (set or a values file), it renders.
func TestChartThatNeedsValues(t *testing.T) {
	const dir = "testdata/charts/needs-values"
	tests := []struct {
		name    string
		set     ChartSettings
		wantErr []string // substrings of the one error, position first
	}{
		{"schema requires a value", ChartSettings{}, []string{
			dir + "/Chart.yaml:1:1: ", `chart "needs-values" cannot render: its values do not meet its values.schema.json (at '': missing property 'policy')`,
			"set them with helm.charts." + dir + ".set (e.g. [policy=…]) or list values files in helm.charts." + dir + ".values in .kiln.yaml, or pass --set/--values"}},
		{"the setting's name is the caller's", ChartSettings{Setting: "helm.charts.app"}, []string{"helm.charts.app.set (e.g. [policy=…])"}},
		{"required fails at its template line", ChartSettings{Set: []string{"policy=sync"}}, []string{
			dir + "/templates/configmap.yaml:7:12: ", `chart "needs-values" cannot render: image.repository must be set: if the chart needs values, set them with helm.charts.` + dir + ".set"}},
		{"set and a values file give them", ChartSettings{Set: []string{"policy=sync"}, ValueFiles: []string{dir + "/ci/values.yaml"}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := Discover([]string{dir}, Options{Chart: func(string) ChartSettings { return tt.set }})
			u := unitByDir(t, res, dir)
			if tt.wantErr == nil {
				if len(u.Source.Errs) > 0 || len(u.Source.Objects) != 1 {
					t.Fatalf("errors %v, %d objects; want the ConfigMap", u.Source.Errs, len(u.Source.Objects))
				}
				return
			}
			if len(u.Source.Errs) != 1 {
				t.Fatalf("errors = %v, want one", u.Source.Errs)
			}
			msg := filepath.ToSlash(u.Source.Errs[0].Error())
			for _, w := range tt.wantErr {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q\ndoes not contain %q", msg, w)
				}
			}
		})
	}
}

// TestHelmLogLinesBecomeWarnings: Helm logs the symbolic links it follows
// (through the log package, to stderr); kiln says it as a warning naming
// the link, and nothing reaches stderr raw.
func TestHelmLogLinesBecomeWarnings(t *testing.T) {
	const dir = "testdata/charts/linked"
	res := Discover([]string{dir}, Options{})
	u := unitByDir(t, res, dir)
	if len(u.Source.Errs) > 0 || len(u.Source.Objects) != 1 {
		t.Fatalf("errors %v, %d objects; want the linked ConfigMap", u.Source.Errs, len(u.Source.Objects))
	}
	var got []string
	for _, w := range res.Warnings {
		got = append(got, filepath.ToSlash(w.Error()))
	}
	want := dir + "/templates/configmap.yaml: warning: Helm follows this symbolic link to " + dir + "/shared/configmap.yaml and reads the file there into the chart"
	if len(got) != 1 || got[0] != want {
		t.Errorf("warnings = %q, want [%q]", got, want)
	}
}

// TestTraceLinesPastAnOffBlock: a template whose first block the values
// turn off (metallb's speaker.yaml: 123 lines of an FRR ConfigMap before
// the DaemonSet) still traces the output to its lines: the output resumes
// at a line the rest of the template holds once, past the search window.
func TestTraceLinesPastAnOffBlock(t *testing.T) {
	var tmpl strings.Builder
	tmpl.WriteString("{{- if .Values.frr }}\napiVersion: v1\nkind: ConfigMap\ndata:\n")
	for i := 0; i < 100; i++ {
		tmpl.WriteString("  line: x\n")
	}
	tmpl.WriteString("{{- end }}\n---\napiVersion: apps/v1\nkind: DaemonSet\nspec:\n  template:\n    spec:\n      hostNetwork: true\n")
	lines := traceLines("---\napiVersion: apps/v1\nkind: DaemonSet\nspec:\n  template:\n    spec:\n      hostNetwork: true\n", tmpl.String())
	if want := []int{0, 0, 107, 108, 109, 110, 111, 112, 0}; fmt.Sprint(lines) != fmt.Sprint(want) {
		t.Errorf("traced %v, want %v", lines, want)
	}
}
