package objdiff

import (
	"fmt"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

func decode(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestFields(t *testing.T) {
	const pod = `
spec:
  containers:
  - name: app
    image: app:1
    env:
    - {name: A, value: "1"}
    - {name: B, value: "2"}
    ports:
    - {containerPort: 80}
    - {containerPort: 443}
  - name: sidecar
    image: proxy:1
  volumes:
  - {name: data, emptyDir: {}}
  - {name: tmp, emptyDir: {}}
  args: [--a, --b]
metadata:
  annotations: {kiln.dev/ignore: x}
`
	cases := []struct {
		name string
		edit func(string) string
		want []string
	}{
		{"same", func(s string) string { return s }, nil},
		{"image changed", func(s string) string { return strings.Replace(s, "app:1", "app:2", 1) },
			[]string{"changed spec.containers[name=app].image app:1 → app:2"}},
		{"containers reordered: no change", func(s string) string {
			return strings.Replace(strings.Replace(s, "  - name: sidecar\n    image: proxy:1\n", "", 1), "  containers:\n", "  containers:\n  - name: sidecar\n    image: proxy:1\n", 1)
		}, nil},
		{"an env item added first: matched by name, not index", func(s string) string {
			return strings.Replace(s, "    env:\n", "    env:\n    - {name: Z, value: \"0\"}\n", 1)
		}, []string{"added spec.containers[name=app].env[name=Z] <nil> → map[name:Z value:0]"}},
		{"a port without a name matched by containerPort", func(s string) string {
			return strings.Replace(s, "{containerPort: 80}", "{containerPort: 80, protocol: UDP}", 1)
		},
			[]string{"added spec.containers[name=app].ports[containerPort=80].protocol <nil> → UDP"}},
		{"a volume removed", func(s string) string { return strings.Replace(s, "  - {name: data, emptyDir: {}}\n", "", 1) },
			[]string{"removed spec.volumes[name=data] map[emptyDir:map[] name:data] → <nil>"}},
		{"a list of scalars by index", func(s string) string { return strings.Replace(s, "[--a, --b]", "[--a, --c, --d]", 1) },
			[]string{"changed spec.args[1] --b → --c", "added spec.args[2] <nil> → --d"}},
		{"an annotation key quoted", func(s string) string { return strings.Replace(s, "kiln.dev/ignore: x", "kiln.dev/ignore: z", 1) },
			[]string{`changed metadata.annotations["kiln.dev/ignore"] x → z`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			for _, ch := range Fields(decode(t, pod), decode(t, c.edit(pod))) {
				got = append(got, fmt.Sprintf("%s %s %v → %v", ch.Op, ch.Path, ch.Old, ch.New))
			}
			if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(c.want, "\n"))
			}
		})
	}
}

func TestMask(t *testing.T) {
	var m Masker
	secret := decode(t, "data: {password: c3VwZXJzZWNyZXQ=}\nstringData: {token: abcdefgh12345678}\n")
	m.Learn(secret)
	masked := m.Mask("v1", "Secret", secret)
	if got := masked["data"].(map[string]any)["password"]; got != Marker([]byte("supersecret")) {
		t.Errorf("data.password: %v, want the marker of the decoded value", got)
	}
	cm := decode(t, "data: {url: 'postgres://u:supersecret@db', plain: hello}\n")
	out := m.Mask("v1", "ConfigMap", cm)
	if got := out["data"].(map[string]any); got["url"] != Marker([]byte("postgres://u:supersecret@db")) || got["plain"] != "hello" {
		t.Errorf("a ConfigMap holding the Secret's value: %v", got)
	}
	if cm["data"].(map[string]any)["url"] != "postgres://u:supersecret@db" {
		t.Errorf("Mask changed its input")
	}
	// A values.yaml in a Secret: each string leaf is looked for too.
	m.Learn(decode(t, "stringData: {values.yaml: \"db: {password: leafsecret1}\\nreplicas: 2\\n\"}\n"))
	env := decode(t, "value: leafsecret1\n")
	if got := m.Mask("apps/v1", "Deployment", env)["value"]; got != Marker([]byte("leafsecret1")) {
		t.Errorf("a leaf of a Secret's values.yaml: %v, want its marker", got)
	}
}

// TestMarkdownCut: a report longer than the limit keeps its summary table
// and the sections that fit, and says the cut.
func TestMarkdownCut(t *testing.T) {
	r := &Report{Base: "main", Head: "working tree"}
	for i := range 50 {
		a := App{Name: fmt.Sprintf("folder app%02d", i)}
		a.Objects = append(a.Objects, Object{APIVersion: "v1", Kind: "ConfigMap", Namespace: "ns", Name: "c", Op: Changed,
			Changes: []Change{{Path: "data.big", Op: Changed, Old: strings.Repeat("a\n", 300), New: strings.Repeat("b\n", 300)}}})
		r.Apps = append(r.Apps, a)
	}
	full := markdown(r, Options{Context: 3})
	cut := markdown(r, Options{Context: 3, Limit: CommentLimit})
	if len(full) <= CommentLimit || len(cut) > CommentLimit {
		t.Fatalf("full %d, cut %d characters; want the full one over the limit and the cut one under", len(full), len(cut))
	}
	if !strings.Contains(cut, "| folder app49 |") || !strings.Contains(cut, "Cut to fit GitHub's comment limit") || strings.Contains(cut, "<b>folder app49</b>") {
		t.Errorf("the cut report lacks the whole summary table or the note, or holds every section")
	}
	if strings.Contains(full, "Cut to fit") {
		t.Errorf("the uncut report says it was cut")
	}
}

// TestContext: a multi-line value shows the changed lines with --context
// lines around them.
func TestContext(t *testing.T) {
	old := "a\nb\nc\nd\ne\nf\ng\n"
	lines := changedLines(old, strings.Replace(old, "d", "D", 1), 1)
	var got []string
	for _, l := range lines {
		got = append(got, string(l.mark)+l.text)
	}
	if want := " c,-d,+D, e"; strings.Join(got, ",") != want {
		t.Errorf("got %q, want %q", strings.Join(got, ","), want)
	}
}

func TestAppsDiffer(t *testing.T) {
	for n, want := range map[int]string{0: "0 apps differ", 1: "1 app differs", 2: "2 apps differ"} {
		if got := appsDiffer(n); got != want {
			t.Errorf("appsDiffer(%d) = %q, want %q", n, got, want)
		}
	}
}
