package manifest

import (
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
