package manifest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	_ "github.com/kilnhq/kiln/internal/golden"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []string // Kind/name@line:col
		wantErr []string // substrings of error texts, in order
	}{
		{
			name: "multi-document with empty documents",
			in:   "---\napiVersion: v1\nkind: Pod\nmetadata: {name: a, namespace: ns}\n---\n# only a comment\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: b\n",
			want: []string{"Pod/ns/a@2:1", "Deployment/b@8:1"},
		},
		{
			name: "List expanded",
			in:   "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: c1}\n- apiVersion: v1\n  kind: Secret\n  metadata: {name: s1}\n",
			want: []string{"ConfigMap/c1@4:3", "Secret/s1@7:3"},
		},
		{
			name: "typed List expanded",
			in:   "apiVersion: v1\nkind: ConfigMapList\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: x}}\n",
			want: []string{"ConfigMap/x@4:3"},
		},
		{
			name: "JSON document",
			in:   `{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop"}}`,
			want: []string{"Namespace/shop@1:1"},
		},
		{
			name: "scalar document is skipped, others still read",
			in:   "hello\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: a}\n",
			want: []string{"Pod/a@3:1"},
		},
		{
			name:    "missing kind",
			in:      "apiVersion: v1\nmetadata: {name: a}\n",
			wantErr: []string{"f.yaml:1:1: object has no kind"},
		},
		{
			name: "missing apiVersion and kind is not an object: skipped",
			in:   "metadata: {name: a}\n",
		},
		{
			name:    "kind without apiVersion stays an error",
			in:      "kind: Pod\nmetadata: {name: a}\n",
			wantErr: []string{"f.yaml:1:1: object has no apiVersion"},
		},
		{
			name:    "invalid YAML names its line",
			in:      "apiVersion: v1\nkind: Pod\nmetadata:\n  name: [a\n",
			wantErr: []string{"f.yaml:"},
		},
		{
			name:    "tab indentation",
			in:      "apiVersion: v1\nkind: Pod\nmetadata:\n\tname: a\n",
			wantErr: []string{"f.yaml:4:1: invalid YAML", "tabs cannot indent YAML"},
		},
		{
			name:    "invalid UTF-8",
			in:      "apiVersion: v1\nkind: Pod\nmetadata: {name: \xff}\n",
			wantErr: []string{"f.yaml:3:18: file is not valid UTF-8"},
		},
		{
			name: "sequence document (a JSON patch) is skipped",
			in:   "- a\n- b\n",
		},
		{
			name:    "list item that is not an object",
			in:      "apiVersion: v1\nkind: List\nitems:\n- 3\n",
			wantErr: []string{"f.yaml:4:3: expected a Kubernetes object"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs, errs := Parse("f.yaml", []byte(tt.in))
			var got []string
			for _, o := range objs {
				got = append(got, o.Ref().String()+"@"+strconv.Itoa(o.Node().Line)+":"+strconv.Itoa(o.Node().Column))
			}
			if strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Errorf("objects = %v, want %v", got, tt.want)
			}
			joined := errors.Join(errs...)
			if len(tt.wantErr) == 0 && joined != nil {
				t.Fatalf("unexpected errors: %v", joined)
			}
			for _, w := range tt.wantErr {
				if joined == nil || !strings.Contains(joined.Error(), w) {
					t.Errorf("errors %v, want one containing %q", joined, w)
				}
			}
		})
	}
}

const pod = `apiVersion: v1
kind: Pod
metadata:
  name: web
  labels:
    app.kubernetes.io/name: web
spec:
  containers:
  - name: app
    image: nginx
    securityContext:
      privileged: true
  - name: sidecar
    image: envoy
`

func TestLocate(t *testing.T) {
	objs, errs := Parse("p.yaml", []byte(pod))
	if len(errs) > 0 || len(objs) != 1 {
		t.Fatalf("parse: %v", errs)
	}
	o := objs[0]
	tests := []struct {
		field     string
		line, col int
	}{
		{"", 1, 1},
		{"spec", 7, 1},
		{"spec.containers[0]", 9, 5},
		{"spec.containers[0].securityContext.privileged", 12, 7},
		{"spec.containers[0].securityContext.runAsNonRoot", 11, 5}, // missing: its parent
		{"spec.containers[1].image", 14, 5},
		{"spec.containers[7].image", 8, 3}, // missing index: the list
		{`metadata.labels["app.kubernetes.io/name"]`, 6, 5},
		{"spec.volumes[0].hostPath", 7, 1},
	}
	for _, tt := range tests {
		got := o.Locate(tt.field)
		if got.Line != tt.line || got.Column != tt.col || got.File != "p.yaml" {
			t.Errorf("Locate(%q) = %v, want p.yaml:%d:%d", tt.field, got, tt.line, tt.col)
		}
	}
	if n := o.Lookup("spec.containers[1].name"); n == nil || n.Value != "sidecar" {
		t.Errorf("Lookup = %v", n)
	}
	if n := o.Lookup("spec.containers[x]"); n != nil {
		t.Errorf("Lookup of a bad index = %v, want nil", n)
	}
}

func TestSplitPath(t *testing.T) {
	tests := map[string][]string{
		"":                         nil,
		"a.b":                      {"a", "b"},
		"a[0].b":                   {"a", "0", "b"},
		`m.labels["x.y/z"].q`:      {"m", "labels", "x.y/z", "q"},
		`m['a.b']`:                 {"m", "a.b"},
		"spec.containers[12]":      {"spec", "containers", "12"},
		"a[":                       {"a", ""},
		"spec.template.spec.x[1]y": {"spec", "template", "spec", "x", "1", "y"},
	}
	for in, want := range tests {
		got := SplitPath(in)
		if strings.Join(got, "|") != strings.Join(want, "|") || len(got) != len(want) {
			t.Errorf("SplitPath(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestContent(t *testing.T) {
	in := `apiVersion: v1
kind: ConfigMap
metadata: {name: c}
data:
  num: 10
  f: 1.5
  b: true
  s: "10"
  z: null
  hex: 0x10
base: &b {x: 1}
merged:
  <<: *b
  w: 2
`
	objs, errs := Parse("c.yaml", []byte(in))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	c, err := objs[0].Content()
	if err != nil {
		t.Fatal(err)
	}
	data := c["data"].(map[string]any)
	want := map[string]any{"num": int64(10), "f": 1.5, "b": true, "s": "10", "z": nil, "hex": int64(16)}
	for k, v := range want {
		if data[k] != v {
			t.Errorf("data.%s = %#v, want %#v", k, data[k], v)
		}
	}
	m := c["merged"].(map[string]any)
	if m["x"] != int64(1) || m["w"] != int64(2) {
		t.Errorf("merge key: %v", m)
	}
}

// TestReadAsKubectl: values are what kubectl's YAML reader (YAML 1.1,
// sigs.k8s.io/yaml) sends the server, and each surprise is a note at its line.
func TestReadAsKubectl(t *testing.T) {
	in := `apiVersion: v1
kind: ConfigMap
metadata: {name: c}
data:
  priv: yes
  country: no
  quoted: "yes"
  tagged: !!str on
  mode: 0755
  big: 1e3
  newoctal: 0o17
  on: key
  a: 1
  a: 2
base: &b {x: 1, y2: 1}
before:
  x: 0
  <<: *b
after:
  <<: *b
  x: 3
list:
  <<: [{k: first}, {k: second, j: 2}]
`
	objs, errs := Parse("c.yaml", []byte(in))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	c, err := objs[0].Content()
	if err != nil {
		t.Fatal(err)
	}
	data := c["data"].(map[string]any)
	want := map[string]any{"priv": true, "country": false, "quoted": "yes", "tagged": "on", "mode": int64(493),
		"big": float64(1000), "newoctal": "0o17", "true": "key", "a": int64(2)}
	for k, v := range want {
		if data[k] != v {
			t.Errorf("data.%s = %#v, want %#v", k, data[k], v)
		}
	}
	if len(data) != len(want) {
		t.Errorf("data = %v, want the keys of %v", data, want)
	}
	if got := c["before"].(map[string]any)["x"]; got != int64(1) {
		t.Errorf("a merge after a key replaces it (YAML 1.1 reader order): x = %v, want 1", got)
	}
	if got := c["after"].(map[string]any)["x"]; got != int64(3) {
		t.Errorf("a key after a merge replaces the merged value: x = %v, want 3", got)
	}
	if l := c["list"].(map[string]any); l["k"] != "first" || l["j"] != int64(2) {
		t.Errorf("of merged mappings the earlier wins: %v", l)
	}
	var got []string
	for _, n := range objs[0].Notes() {
		got = append(got, fmt.Sprintf("%d:%d %s %s", n.Pos.Line, n.Pos.Column, n.Rule, n.Message))
	}
	wantNotes := []string{
		`5:9 yaml/implicit-type yes is read as the boolean true`,
		`6:12 yaml/implicit-type no is read as the boolean false`,
		`9:9 yaml/implicit-type 0755 is read as the octal number 493`,
		`10:8 yaml/implicit-type 1e3 is read as the number 1000`,
		`11:13 yaml/implicit-type 0o17 is read as a string`,
		`12:3 yaml/implicit-type on is read as the boolean true`,
		`14:3 yaml/duplicate-key duplicate key "a" (first at line 13)`,
	}
	if len(got) != len(wantNotes) {
		t.Fatalf("notes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(wantNotes, "\n"))
	}
	for i := range got {
		if !strings.HasPrefix(got[i], wantNotes[i]) {
			t.Errorf("note %d = %s\nwant prefix %s", i, got[i], wantNotes[i])
		}
	}
}

func TestContentErrors(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"alias bomb", billionLaughs(), "aliases expand to more than 100000 nodes"},
		{"complex key", "apiVersion: v1\nkind: ConfigMap\n? [a, b]\n: c\n", "c.yaml:3:3: mapping key must be a string"},
		{"deep nesting", "apiVersion: v1\nkind: X\nspec: " + strings.Repeat("[", 2000) + strings.Repeat("]", 2000) + "\n", "nested more than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs, errs := Parse("c.yaml", []byte(tt.in))
			if len(errs) > 0 {
				if strings.Contains(errors.Join(errs...).Error(), tt.want) {
					return
				}
				t.Fatalf("parse errors %v", errs)
			}
			_, err := objs[0].Content()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Content() error = %v, want %q", err, tt.want)
			}
		})
	}
}

func billionLaughs() string {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: ConfigMap\na0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n")
	for i := 1; i < 10; i++ {
		b.WriteString("a" + strconv.Itoa(i) + ": &a" + strconv.Itoa(i) + " [")
		for j := 0; j < 9; j++ {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString("*a" + strconv.Itoa(i-1))
		}
		b.WriteString("]\n")
	}
	return b.String()
}

func TestReadDirectory(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, content string) {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("b.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n")
	write("a/z.yml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: z}\n")
	write("a/y.json", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"y"}}`)
	write("c.txt", "not yaml")
	write(".git/x.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: hidden}\n")
	write(".kiln.yaml", "rules: {}\n")
	write("bad.yaml", "apiVersion: v1\nkind: [\n") // a manifest that does not parse
	set := Read([]string{dir}, nil)
	var names []string
	for _, o := range set.Objects() {
		names = append(names, o.Name)
	}
	if got := strings.Join(names, ","); got != "y,z,b" {
		t.Errorf("objects in lexical file order = %s, want y,z,b", got)
	}
	errs := set.Errors()
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "bad.yaml:") {
		t.Errorf("errors = %v, want one for bad.yaml", errs)
	}

	empty := t.TempDir()
	set = Read([]string{empty, filepath.Join(dir, "missing.yaml")}, nil)
	got := errors.Join(set.Errors()...).Error()
	for _, want := range []string{"directory holds no *.yaml", "missing.yaml: cannot read: no such file or directory"} {
		if !strings.Contains(got, want) {
			t.Errorf("errors %q, want %q", got, want)
		}
	}
}

func TestReadStdin(t *testing.T) {
	set := Read([]string{"-"}, strings.NewReader("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"))
	objs := set.Objects()
	if len(objs) != 1 || objs[0].File != "<stdin>" {
		t.Fatalf("stdin objects = %v", objs)
	}
}

func TestPodTemplatesOf(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"apiVersion: v1\nkind: Pod\nspec: {}\n", []string{"spec"}},
		{"apiVersion: apps/v1\nkind: Deployment\nspec: {template: {spec: {}}}\n", []string{"spec.template.spec"}},
		{"apiVersion: batch/v1\nkind: CronJob\nspec: {jobTemplate: {spec: {template: {spec: {}}}}}\n", []string{"spec.jobTemplate.spec.template.spec"}},
		{"apiVersion: v1\nkind: PodTemplate\ntemplate: {spec: {}}\n", []string{"template.spec"}},
		{"apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nspec:\n  replicatedJobs:\n  - name: a\n    template: {spec: {template: {spec: {}}}}\n  - name: b\n    template: {spec: {template: {spec: {}}}}\n",
			[]string{"spec.replicatedJobs[0].template.spec.template.spec", "spec.replicatedJobs[1].template.spec.template.spec"}},
		{"apiVersion: v1\nkind: ConfigMap\n", nil},
		{"apiVersion: apps/v1\nkind: Deployment\nspec: {}\n", nil},
	}
	for _, tt := range tests {
		objs, errs := Parse("w.yaml", []byte(tt.in))
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		var got []string
		for _, pt := range PodTemplatesOf(objs[0]) {
			got = append(got, pt.SpecPath())
		}
		if strings.Join(got, ",") != strings.Join(tt.want, ",") {
			t.Errorf("%s: templates %v, want %v", objs[0].Kind, got, tt.want)
		}
	}
}

func TestParseKubeVersion(t *testing.T) {
	for in, want := range map[string]string{"1.31": "1.31", "v1.29": "1.29", "v1.30.4": "1.30"} {
		v, err := ParseKubeVersion(in)
		if err != nil || v.String() != want {
			t.Errorf("ParseKubeVersion(%q) = %v, %v; want %s", in, v, err, want)
		}
	}
	for _, in := range []string{"", "1", "2.0", "1.x", "1.2.3.4", "v1.30.x"} {
		if _, err := ParseKubeVersion(in); err == nil {
			t.Errorf("ParseKubeVersion(%q) succeeded, want an error", in)
		}
	}
	if !(KubeVersion{1, 28}).Less(KubeVersion{1, 29}) || !(KubeVersion{1, 29}).AtLeast(KubeVersion{1, 29}) {
		t.Error("version ordering is wrong")
	}
}

func TestWriteIsDeterministic(t *testing.T) {
	objs, _ := Parse("p.yaml", []byte(pod+"---\n"+pod))
	var a, b strings.Builder
	if err := Write(&a, objs); err != nil {
		t.Fatal(err)
	}
	if err := Write(&b, objs); err != nil {
		t.Fatal(err)
	}
	if a.String() != b.String() || strings.Count(a.String(), "---\n") != 1 {
		t.Errorf("Write output:\n%s", a.String())
	}
	back, errs := Parse("again.yaml", []byte(a.String()))
	if len(errs) > 0 || len(back) != 2 {
		t.Errorf("written stream does not parse back: %v", errs)
	}
}

// TestInterningKeepsContent checks that the content Parse decodes with
// shared strings equals a plain Decode of the same tree, and that equal
// short strings are shared across the objects of a file.
func TestInterningKeepsContent(t *testing.T) {
	files, _ := filepath.Glob("../examples/*/out/*/*.yaml")
	if len(files) == 0 {
		t.Fatal("no example output found")
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		objs, errs := Parse(f, data)
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		for _, o := range objs {
			got, _ := o.Content()
			want, err := Decode(f, o.Node())
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s: %s: interned content differs from Decode", f, o.Name)
			}
		}
	}
	objs, _ := Parse("a.yaml", []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {k: shared}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\ndata: {k: shared}\n"))
	a, _ := objs[0].Content()
	b, _ := objs[1].Content()
	va, vb := a["data"].(map[string]any)["k"], b["data"].(map[string]any)["k"]
	if unsafe.StringData(va.(string)) != unsafe.StringData(vb.(string)) {
		t.Error("equal values of one file are not shared")
	}
}

func TestParseSkipping(t *testing.T) {
	tests := []struct {
		name, in string
		want     []string // skipped positions and reasons
		wantErr  string
	}{
		{"values file", "replicas: 2\nimage: {tag: x}\n", []string{"1:1 no apiVersion or kind"}, ""},
		{"JSON patch list", `[{"op": "remove", "path": "/spec"}]`, []string{"1:1 a list"}, ""},
		{"one stray document among objects", "apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n---\nfoo: bar\n", []string{"5:1 no apiVersion or kind"}, ""},
		{"template outside a chart", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Values.name }}\n", []string{"4:10 a template ({{ }} syntax)"}, ""},
		{"invalid YAML without template syntax stays an error", "apiVersion: v1\nkind: [\n", nil, "invalid YAML"},
		{"apiVersion without kind stays an error", "apiVersion: v1\nmetadata: {}\n", nil, "object has no kind"},
		// A database seed under a samples folder: neither YAML nor JSON, and
		// nothing in it says Kubernetes.
		{"seed file of flow mappings", "{score: 4, name: a}\n{score: 5, name: b}\n", []string{"2:1 " + NotKubernetesReason}, ""},
		{"broken tool config", "steps:\n  - run: make\n  - run: a: b\n", []string{"3:1 " + NotKubernetesReason}, ""},
		{"invalid YAML naming a kind stays an error", "metadata:\n  name: a\nkind: Pod\n  spec: [\n", nil, "invalid YAML"},
		{"invalid JSON naming an apiVersion stays an error", `{"apiVersion": "v1", "kind": "Pod"}{"apiVersion": `, nil, "invalid JSON"},
		{"flow-style object that does not parse stays an error", "{apiVersion: v1, kind: Pod\n", nil, "invalid YAML"},
		// Compressed or binary content under a manifest's name is an input
		// error (exit 2), never skipped: a corrupt file must not pass a gate.
		{"gzip-compressed file", "\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03\xcb\x48\xcd\xc9\xc9\x07\x00", nil, "1:1: gzip-compressed data, not YAML or JSON text"},
		{"binary file", "\x7fELF\x02\x01\x01\x00\x00\x00", nil, "1:1: binary data, not YAML or JSON text"},
		{"zip archive", "PK\x03\x04\x14\x00", nil, "a zip archive"},
		// A git-crypt'd secret is kept encrypted on purpose: skipped, said why.
		{"git-crypt file", "\x00GITCRYPT\x00\x8a\x11\x03", []string{"1:1 encrypted with git-crypt"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, skipped, errs := ParseSkipping("f.yaml", []byte(tt.in))
			var got []string
			for _, s := range skipped {
				got = append(got, strconv.Itoa(s.Pos.Line)+":"+strconv.Itoa(s.Pos.Column)+" "+s.Reason)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("skipped = %q, want %q", got, tt.want)
			}
			for i := range got {
				if !strings.HasPrefix(got[i], tt.want[i]) {
					t.Errorf("skipped[%d] = %q, want prefix %q", i, got[i], tt.want[i])
				}
			}
			joined := errors.Join(errs...)
			if tt.wantErr == "" && joined != nil {
				t.Errorf("errors: %v", joined)
			}
			if tt.wantErr != "" && (joined == nil || !strings.Contains(joined.Error(), tt.wantErr)) {
				t.Errorf("errors %v, want %q", joined, tt.wantErr)
			}
		})
	}
}

// TestParseRenderedKeepsErrors: a tool's output that does not parse is an
// error, whatever it looks like (Helm refuses it too), where the same text
// in a file of the repository is skipped.
func TestParseRenderedKeepsErrors(t *testing.T) {
	for _, in := range []string{"{score: 4}\n{score: 5}\n", "name: {{ .Values.name }}\n  x: ["} {
		if _, errs := ParseRendered("t.yaml", []byte(in)); len(errs) == 0 {
			t.Errorf("ParseRendered(%q) has no error", in)
		}
		if _, skipped, errs := ParseSkipping("t.yaml", []byte(in)); len(errs) > 0 || len(skipped) == 0 {
			t.Errorf("ParseSkipping(%q) = %v, %v; want it skipped", in, skipped, errs)
		}
	}
}

func TestReadWhatKubectlReads(t *testing.T) {
	u16 := []byte{0xFF, 0xFE}
	for _, r := range "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: u16}\n" {
		u16 = append(u16, byte(r), 0)
	}
	tests := []struct {
		name string
		in   []byte
		want string
	}{
		{"%YAML 1.2 directive", []byte("%YAML 1.2\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: y12}\n"), "ConfigMap/y12@3:1"},
		{"null item in a List", []byte("apiVersion: v1\nkind: List\nitems:\n- null\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: b}\n"), "ConfigMap/b@5:3"},
		{"UTF-16 with a BOM", u16, "ConfigMap/u16@1:1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := filepath.Join(t.TempDir(), "f.yaml")
			if err := os.WriteFile(src, tt.in, 0o644); err != nil {
				t.Fatal(err)
			}
			s := ReadFile(src, nil)
			if len(s.Errs) > 0 || len(s.Objects) != 1 {
				t.Fatalf("objects %d, errors %v", len(s.Objects), s.Errs)
			}
			o := s.Objects[0]
			if got := o.Ref().String() + "@" + strconv.Itoa(o.Pos().Line) + ":" + strconv.Itoa(o.Pos().Column); got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
			if _, err := o.Content(); err != nil {
				t.Errorf("content: %v", err)
			}
		})
	}
}

func TestImageRepository(t *testing.T) {
	for image, want := range map[string]string{
		"docker.io/envoyproxy/envoy:v1.31@sha256:abcd": "docker.io/envoyproxy/envoy",
		" FLUENT/Fluentd:v1.17 ":                       "fluent/fluentd",
		"localhost:5000/envoy":                         "localhost:5000/envoy",
		"localhost:5000/envoy:1.0":                     "localhost:5000/envoy",
		"envoy@sha256:abcd":                            "envoy",
		"":                                             "",
	} {
		if got := ImageRepository(image); got != want {
			t.Errorf("ImageRepository(%q) = %q, want %q", image, got, want)
		}
	}
}
