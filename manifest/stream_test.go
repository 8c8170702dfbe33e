package manifest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReleasedNodesKeepPositions reads a stream the way kiln lint does (trees
// released, parsed again per document on demand) and checks that every
// position and every node matches a parse that kept the trees.
func TestReleasedNodesKeepPositions(t *testing.T) {
	stream := `# leading comment
apiVersion: v1
kind: Pod
metadata: {name: a}
spec:
  containers:
  - name: app
    image: nginx
---
---
# an empty document above, a comment here
--- {apiVersion: v1, kind: ConfigMap, metadata: {name: flow}, data: {k: v}}
--- 
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Pod
  metadata: {name: in-list}
  spec:
    containers: [{name: x, image: y}]
- apiVersion: v1
  kind: Service
  metadata:
    name: svc
...
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: last
spec:
  template:
    spec:
      containers:
      - name: app
        image: nginx
        securityContext:
          privileged: true
`
	p := filepath.Join(t.TempDir(), "s.yaml")
	if err := os.WriteFile(p, []byte(stream), 0o644); err != nil {
		t.Fatal(err)
	}
	kept, errs := Parse(p, []byte(stream))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	src := ReadFile(p, nil)
	if len(src.Errs) > 0 || len(src.Objects) != len(kept) {
		t.Fatalf("ReadFile: %d objects, errors %v", len(src.Objects), src.Errs)
	}
	paths := []string{"", "metadata", "metadata.name", "spec.containers[0].image", "data.k",
		"spec.template.spec.containers[0].securityContext.privileged", "spec.nope", "kind"}
	for i, o := range src.Objects {
		if o.node.Load() != nil {
			t.Errorf("%s: tree not released", o.Name)
		}
		for _, f := range paths {
			if got, want := o.Locate(f), kept[i].Locate(f); got != want {
				t.Errorf("%s: Locate(%q) = %v, want %v", o.Name, f, got, want)
			}
		}
		got, err := Encode(o.Node())
		if err != nil {
			t.Fatal(err)
		}
		want, _ := Encode(kept[i].Node())
		if string(got) != string(want) {
			t.Errorf("%s: re-parsed node differs:\n%s\nwant:\n%s", o.Name, got, want)
		}
	}
	// Without the file's bytes, positions and content stay; trees are gone.
	dropped := &Set{Sources: []*Source{ReadFile(p, nil)}}
	dropped.DropSources()
	for i, o := range dropped.Objects() {
		for _, f := range paths {
			if got, want := o.Locate(f), kept[i].Locate(f); got != want {
				t.Errorf("after DropSources: %s: Locate(%q) = %v, want %v", o.Name, f, got, want)
			}
		}
		if c, err := o.Content(); err != nil || c["kind"] != kept[i].Kind {
			t.Errorf("after DropSources: %s: Content() = kind %v, %v", o.Name, c["kind"], err)
		}
		if o.Node() != nil || o.Lookup("metadata") != nil {
			t.Errorf("after DropSources: %s: tree still parsed", o.Name)
		}
	}
	// Changes to a loaded node stay until it is released.
	o := src.Objects[0]
	o.Node().Content[1].Value = "v2"
	if !strings.Contains(mustEncode(t, o), "apiVersion: v2") {
		t.Error("change to a loaded node was lost")
	}
	o.ReleaseNode()
	if !strings.Contains(mustEncode(t, o), "apiVersion: v1") {
		t.Error("released node was not parsed again from the file")
	}
}

func mustEncode(t *testing.T, o *Object) string {
	t.Helper()
	b, err := Encode(o.Node())
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestReadFileEach: a file handed out a few objects at a time gives the
// objects, positions, document lines, reparsed nodes, errors and skipped
// documents of a whole read, for every part size.
func TestReadFileEach(t *testing.T) {
	text := "# head\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {k: \"1\"}\n" +
		"---\n---\n# only a comment\n---\nkey: not an object\n" +
		"---\napiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Secret, metadata: {name: s1}}\n- {apiVersion: v1, kind: Secret, metadata: {name: s2}}\n- {apiVersion: v1, kind: Secret, metadata: {name: s3}}\n" +
		"---\napiVersion: v1\nkind: Service\nmetadata:\n  name: b\nspec:\n  ports: [{port: 80}]\n" +
		"---\napiVersion: v1\nkind: Pod\nmetadata: {name: c}\nspec: {containers: [{name: x, image: y}]}\n" +
		"---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: d\n"
	path := filepath.Join(t.TempDir(), "many.yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	describe := func(objs []*Object, src *Source) string {
		var b strings.Builder
		for _, o := range objs {
			n := o.Node()
			fmt.Fprintf(&b, "%s/%s doc %d item %d at %s lines %v name at %s node line %d\n",
				o.Kind, o.Name, o.Doc, o.Item, o.Pos(), o.docLines, o.Locate("metadata.name"), n.Line)
		}
		fmt.Fprintf(&b, "errs %v skipped %v all skipped %v\n", src.Errs, src.Skipped, src.AllSkipped())
		return b.String()
	}
	whole := ReadFile(path, nil)
	want := describe(whole.Objects, whole)
	if len(whole.Objects) != 6 || len(whole.Errs) != 1 || len(whole.Skipped) != 1 {
		t.Fatalf("the fixture should read as 6 objects, 1 error, 1 skipped document:\n%s", want)
	}
	for _, n := range []int{1, 2, 3, 5, 100, 0} {
		var objs []*Object
		calls := 0
		src := ReadFileEach(path, nil, n, func(part []*Object) {
			calls++
			if n > 0 && len(part) > n+2 { // a List's items come together
				t.Errorf("part of %d objects, asked for %d", len(part), n)
			}
			objs = append(objs, part...)
		})
		if len(src.Objects) != 0 {
			t.Errorf("n=%d: the Source keeps %d objects", n, len(src.Objects))
		}
		if got := describe(objs, src); got != want {
			t.Errorf("n=%d (%d parts):\n%s\nwhole read:\n%s", n, calls, got, want)
		}
		if n == 1 && calls < 4 {
			t.Errorf("n=1: %d parts, want one per document", calls)
		}
	}
}
