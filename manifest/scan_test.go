package manifest

import (
	"fmt"
	"testing"
)

// TestReadSelected: the first pass parses only the documents asked for (and
// those a line scan cannot tell), with the positions and document indexes
// of a full read.
func TestReadSelected(t *testing.T) {
	const src = `# leading comment
apiVersion: v1
kind: ConfigMap
metadata: {name: a}
---
apiVersion: v1
kind: Namespace # the one we want
metadata:
  name: shop
  labels: {team: x}
--- # a comment on the marker
apiVersion: apps/v1
kind: "Deployment"
metadata: {name: web, namespace: shop}
---
{"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "json"}}
---
apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Namespace, metadata: {name: in-list}}
- {apiVersion: v1, kind: Service, metadata: {name: svc}}
---
  apiVersion: v1
  kind: Pod
  metadata: {name: indented}
---
apiVersion: v1
kind: Namespace
metadata: {name: last}
`
	full, errs := Parse("f.yaml", []byte(src))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	byKey := map[Key]*Object{}
	for _, o := range full {
		byKey[o.Key()] = o
	}
	var scanned []string
	got := ReadSelected("f.yaml", []byte(src), func(s Scanned) bool {
		scanned = append(scanned, s.APIVersion+" "+s.Kind)
		return s.Kind == "Namespace"
	})
	var names []string
	for _, o := range got {
		names = append(names, o.Kind+"/"+o.Name)
		want := byKey[o.Key()]
		if want == nil {
			t.Errorf("%s/%s (doc %d, item %d): no such object in a full read", o.Kind, o.Name, o.Doc, o.Item)
			continue
		}
		for _, field := range []string{"", "metadata.name", "kind"} {
			if g, w := o.Locate(field), want.Locate(field); g != w {
				t.Errorf("%s/%s: Locate(%q) = %v, a full read says %v", o.Kind, o.Name, field, g, w)
			}
		}
	}
	if g, w := fmt.Sprint(names), "[Namespace/shop Secret/json Namespace/in-list Service/svc Pod/indented Namespace/last]"; g != w {
		t.Errorf("parsed %s, want %s", g, w)
	}
	if g, w := fmt.Sprint(scanned), "[v1 ConfigMap v1 Namespace apps/v1 Deployment v1 Namespace]"; g != w {
		t.Errorf("asked about %s, want %s", g, w)
	}
	if got := ReadSelected("f.yaml", []byte(src), func(Scanned) bool { return false }); len(got) != 4 {
		t.Errorf("with nothing wanted, %d objects parsed; want the 4 a scan cannot tell or that are Lists", len(got))
	}
}

// FuzzReadSelected: whatever the input, the first pass never panics and
// every object it returns is one a full read returns, at the same place.
func FuzzReadSelected(f *testing.F) {
	f.Add([]byte("apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n---\nkind: Pod\n"))
	f.Add([]byte("--- |\n  text\n---\nkind: Namespace\napiVersion: v1\nmetadata: {name: b}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		full, _ := Parse("f.yaml", data)
		byKey := map[Key]*Object{}
		for _, o := range full {
			byKey[o.Key()] = o
		}
		for _, o := range ReadSelected("f.yaml", data, func(s Scanned) bool { return s.Kind == "Namespace" }) {
			w := byKey[o.Key()]
			if w == nil {
				continue // a document after a YAML error that blanking removed
			}
			if o.Pos() != w.Pos() {
				t.Errorf("%s at %v, a full read says %v", o.Kind, o.Pos(), w.Pos())
			}
		}
	})
}
