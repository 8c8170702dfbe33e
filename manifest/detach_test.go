package manifest

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// TestDetachable: a rendered object lets go of a detachable part once its
// content is held, reads it again only when its tree is asked for, and its
// digest, content and positions are the same either way.
func TestDetachable(t *testing.T) {
	const doc = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  versions:
  - name: v1
    schema:
      openAPIV3Schema:
        type: object
        properties:
          size: {type: integer}
`
	parse := func() *yaml.Node {
		var n yaml.Node
		if err := yaml.Unmarshal([]byte(doc), &n); err != nil {
			t.Fatal(err)
		}
		return n.Content[0]
	}
	slotOf := func(root *yaml.Node) []*yaml.Node {
		v := root
		for _, k := range []string{"spec", "versions"} {
			v = mapValue(v, k)
		}
		schema := mapValue(v.Content[0], "schema")
		return schema.Content[0:2]
	}
	plain, err := NewRenderedObject("crd.yaml", ".", 0, parse())
	if err != nil {
		t.Fatal(err)
	}
	root := parse()
	slot := slotOf(root)
	loads := 0
	part := Detachable{Slot: slot, Sum: TreeSum(slot[1]), Load: func() *yaml.Node { loads++; return slotOf(parse())[1] }}
	o, err := NewRenderedObject("crd.yaml", ".", 0, root, part)
	if err != nil {
		t.Fatal(err)
	}
	before, _ := o.Digest()
	o.ReleaseDetachable()
	if loads != 0 || slot[1].Content != nil {
		t.Fatalf("released: loads %d, part still held: %v", loads, slot[1].Content != nil)
	}
	after, _ := o.Digest()
	if before != after {
		t.Error("the digest changed when the part was let go")
	}
	if loads != 0 {
		t.Error("the digest read the part again")
	}
	c, err := o.Content()
	want, _ := plain.Content()
	if err != nil || fmt.Sprint(c) != fmt.Sprint(want) {
		t.Errorf("content %v, %v; want %v", c, err, want)
	}
	field := "spec.versions[0].schema.openAPIV3Schema.properties.size"
	if got, w := o.Locate(field), plain.Locate(field); got != w || w.Line != 11 {
		t.Errorf("%s at %v, want %v (line 11)", field, got, w)
	}
	if loads != 1 {
		t.Errorf("the part was read %d times, want once", loads)
	}
	if got, w := treeText(o.Node()), treeText(plain.Node()); got != w {
		t.Errorf("tree after reading the part again:\n%s\nwant\n%s", got, w)
	}
	// An object whose content is not held keeps its parts: decoding would
	// read them at once.
	root2 := parse()
	slot2 := slotOf(root2)
	o2, _ := NewRenderedObject("crd.yaml", ".", 0, root2, Detachable{Slot: slot2, Sum: TreeSum(slot2[1]), Load: func() *yaml.Node { loads++; return nil }})
	o2.DropContent()
	o2.ReleaseDetachable()
	if slot2[1].Content == nil {
		t.Error("an object without its content let go of a part")
	}
}

func mapValue(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// treeText writes a tree with every node's position.
func treeText(n *yaml.Node) string {
	var b strings.Builder
	var walk func(n *yaml.Node, depth int)
	walk = func(n *yaml.Node, depth int) {
		fmt.Fprintf(&b, "%*s%d:%d %q\n", depth, "", n.Line, n.Column, n.Value)
		for _, c := range n.Content {
			walk(c, depth+1)
		}
	}
	walk(n, 0)
	return b.String()
}

// TestDetachableConcurrent: digests and lookups of a released object from
// several goroutines at once (go test -race) agree, and the part is read
// again once.
func TestDetachableConcurrent(t *testing.T) {
	const doc = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata:\n  part:\n    a: b\n"
	parse := func() *yaml.Node {
		var n yaml.Node
		if err := yaml.Unmarshal([]byte(doc), &n); err != nil {
			t.Fatal(err)
		}
		return n.Content[0]
	}
	root := parse()
	data := mapValue(root, "data")
	var mu sync.Mutex
	loads := 0
	o, err := NewRenderedObject("c.yaml", ".", 0, root, Detachable{Slot: data.Content[0:2], Sum: TreeSum(data.Content[1]), Load: func() *yaml.Node {
		mu.Lock()
		loads++
		mu.Unlock()
		return mapValue(mapValue(parse(), "data"), "part")
	}})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := o.Digest()
	o.ReleaseDetachable()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			if i%2 == 0 {
				if got, _ := o.Digest(); got != want {
					t.Error("digest changed")
				}
				return
			}
			if pos := o.Locate("data.part.a"); pos.Line != 6 {
				t.Errorf("data.part.a at line %d, want 6", pos.Line)
			}
		})
	}
	wg.Wait()
	if loads != 1 {
		t.Errorf("the part was read %d times, want once", loads)
	}
}
