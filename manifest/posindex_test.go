package manifest

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// indexCases are streams that stress the index: aliases (to scalars, maps
// and lists, used as list items and as values), flow style, quoted and
// numeric keys, a merge key, empty collections, nulls, a List and
// multi-line scalars.
var indexCases = map[string]string{
	"aliases": `apiVersion: apps/v1
kind: Deployment
metadata:
  name: a
  labels: &labels {app: web, "app.kubernetes.io/name": web}
spec:
  selector: {matchLabels: *labels}
  template:
    metadata: {labels: *labels}
    spec:
      containers:
      - &app
        name: app
        image: nginx
        securityContext: &sc {privileged: true, capabilities: {add: [NET_ADMIN, SYS_TIME]}}
      - *app
      - name: side
        securityContext: *sc
        env: [{name: A, value: "1"}, {name: B}]
      initContainers: []
      volumes: ~
`,
	"flow-and-keys": `{apiVersion: v1, kind: ConfigMap, metadata: {name: flow, annotations: {"a.b/c": "x", "1": one}},
 data: {"key with spaces": v, "0": zero, k: [1, [2, 3], {x: y}]}}
`,
	"merge": `apiVersion: v1
kind: Pod
metadata: {name: m}
base: &base {a: 1, b: 2}
spec:
  <<: *base
  c: 3
  containers:
  - name: x
    args:
    - |
      multi
      line
    - >-
      folded
`,
	"list": `apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Service
  metadata: {name: s}
  spec:
    ports: [{port: 80}, {port: 443, name: https}]
- apiVersion: v1
  kind: Pod
  metadata: {name: p}
  spec: {containers: [{name: c, image: i}]}
`,
}

// TestPosIndexLocatesLikeTheTree checks that Locate over the index gives the
// position Locate over the YAML tree gives, for every path into every object
// of the cases, the examples and testdata, and for paths that leave the tree
// (a missing key, an index past the end, a key under a scalar).
func TestPosIndexLocatesLikeTheTree(t *testing.T) {
	streams := map[string][]byte{}
	for name, s := range indexCases {
		streams[name] = []byte(s)
	}
	files, _ := filepath.Glob("../examples/*/out/*/*.yaml")
	more, _ := filepath.Glob("../rules/*/testdata/*/*.yaml")
	for _, f := range append(files, more...) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		streams[f] = b
	}
	if len(files) == 0 {
		t.Fatal("no example output found")
	}
	checked := 0
	for name, data := range streams {
		objs, _ := Parse(name, data)
		for _, o := range objs {
			ix := newPosIndex(o.Node())
			if ix == nil {
				t.Fatalf("%s: %s: no index", name, o.Name)
			}
			for _, p := range allPaths(o.Node(), "") {
				got := ix.locate(o.File, o.Pos(), SplitPath(p))
				if want := o.Locate(p); got != want {
					t.Errorf("%s: %s: Locate(%q) = %v from the index, %v from the tree", name, o.Name, p, got, want)
				}
				checked++
			}
		}
	}
	if checked < 1000 {
		t.Fatalf("only %d paths checked", checked)
	}
}

// allPaths lists the field path of every node under n, and for each a path
// that goes one step too far.
func allPaths(n *yaml.Node, prefix string) []string {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	out := []string{prefix + ".missing", prefix + "[99]", prefix + "[-1]", prefix + "[x]"}
	if n == nil {
		return out
	}
	switch n.Kind {
	case yaml.SequenceNode:
		for i, c := range n.Content {
			p := fmt.Sprintf("%s[%d]", prefix, i)
			out = append(out, p)
			out = append(out, allPaths(c, p)...)
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			p := fmt.Sprintf("%s[%q]", prefix, n.Content[i].Value)
			if prefix == "" {
				p = fmt.Sprintf("[%q]", n.Content[i].Value)
			}
			out = append(out, p)
			out = append(out, allPaths(n.Content[i+1], p)...)
		}
	}
	sort.Strings(out)
	return out
}

// TestPosIndexBounded checks that an alias bomb within the decoder's limits
// still gets a bounded index, and one beyond them none (Locate then parses).
func TestPosIndexBounded(t *testing.T) {
	small := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\nx: &a [1, 2, 3]\ny: [*a, *a, *a]\n"
	objs, errs := Parse("a.yaml", []byte(small))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if ix := newPosIndex(objs[0].Node()); ix == nil || len(ix) > 40 {
		t.Fatalf("index of %d entries", len(ix))
	}
	var node yaml.Node
	bomb := "a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n"
	if err := yaml.Unmarshal([]byte(bomb), &node); err != nil {
		t.Fatal(err)
	}
	if ix := newPosIndex(node.Content[0]); ix != nil {
		t.Fatalf("alias bomb indexed (%d entries)", len(ix))
	}
}
