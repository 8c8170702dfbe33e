package manifest

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestFileModesNotWarned reads testdata/filemode.yaml: octal file modes
// (defaultMode, the mode of volume items, in any object) are read as octal
// without a yaml/implicit-type note, and every other octal keeps its note
// (the lines marked "# want: yaml/implicit-type").
func TestFileModesNotWarned(t *testing.T) {
	const path = "testdata/filemode.yaml"
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for i, line := range strings.Split(string(data), "\n") {
		if _, rule, ok := strings.Cut(line, "# want: "); ok {
			want = append(want, fmt.Sprintf("%d %s", i+1, rule))
		}
	}
	objs, errs := Parse(path, data)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	var got []string
	for _, o := range objs {
		if _, err := o.Content(); err != nil {
			t.Fatal(err)
		}
		for _, n := range o.Notes() {
			got = append(got, fmt.Sprintf("%d %s", n.Pos.Line, n.Rule))
		}
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("notes (line rule):\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// The modes are still read as octal numbers, as kubectl sends them.
	pod, err := objs[0].Content()
	if err != nil {
		t.Fatal(err)
	}
	vol := pod["spec"].(map[string]any)["volumes"].([]any)[0].(map[string]any)["secret"].(map[string]any)
	item := vol["items"].([]any)[0].(map[string]any)
	if vol["defaultMode"] != int64(0o400) || item["mode"] != int64(0o600) {
		t.Errorf("defaultMode = %#v, items[0].mode = %#v; want 256 and 384", vol["defaultMode"], item["mode"])
	}
}
