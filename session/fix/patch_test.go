package fix

import (
	"reflect"
	"strings"
	"testing"

	"github.com/kilnhq/kiln/internal/yamlnode"
	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// rewriteWith decodes src, applies mutate to every document root, and rewrites.
func rewriteWith(t testing.TB, src string, mutate func(root *yaml.Node)) (string, []int) {
	t.Helper()
	roots, err := decodeRoots([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	changed := map[int]*yaml.Node{}
	for i, r := range roots {
		if r != nil {
			mutate(r)
			changed[i] = r
		}
	}
	out, reformatted, err := rewrite("test.yaml", []byte(src), changed)
	if err != nil {
		t.Fatal(err)
	}
	return string(out), reformatted
}

func TestPatch(t *testing.T) {
	for _, tc := range []struct {
		name, src, want string
		mutate          func(root *yaml.Node)
	}{{
		name: "scalar keeps quoting and comment",
		src:  "a: 'x'   # c\nb: \"y\"\nc: z\n",
		mutate: func(r *yaml.Node) {
			setScalar(r, "a", str("x2"))
			setScalar(r, "b", str("y2"))
			setScalar(r, "c", str("z2"))
		},
		want: "a: 'x2'   # c\nb: \"y2\"\nc: z2\n",
	}, {
		name: "key appended at the mapping's indentation, four spaces",
		src:  "a:\n    b: 1\n    # trailing comment\nc: 2\n",
		mutate: func(r *yaml.Node) {
			set(yamlnode.Value(r, "a"), "d", &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{str("e"), str("f")}})
		},
		want: "a:\n    b: 1\n    d:\n        e: f\n    # trailing comment\nc: 2\n",
	}, {
		name: "compact sequence item removed and appended",
		src:  "l:\n# head of x\n- x: 1\n  y: 2\n- z\nm: 1\n",
		mutate: func(r *yaml.Node) {
			l := yamlnode.Value(r, "l")
			l.Content = append(l.Content[1:], str("w"))
		},
		want: "l:\n- z\n- w\nm: 1\n",
	}, {
		name: "indented sequence, new key before an existing one",
		src:  "spec:\n  containers:\n    - name: a\n",
		mutate: func(r *yaml.Node) {
			insertBefore(yamlnode.Value(r, "spec"), "initContainers", &yaml.Node{Kind: yaml.SequenceNode, Content: []*yaml.Node{
				{Kind: yaml.MappingNode, Content: []*yaml.Node{str("name"), str("b")}}}}, "containers")
		},
		want: "spec:\n  initContainers:\n    - name: b\n  containers:\n    - name: a\n",
	}, {
		name:   "flow mapping rewritten on its line",
		src:    "a: {b: 1, c: [x]}   # note\nd: 2\n",
		mutate: func(r *yaml.Node) { set(yamlnode.Value(r, "a"), "e", boolean(true)) },
		want:   "a: {b: 1, c: [x], e: true}   # note\nd: 2\n",
	}, {
		name:   "block list emptied becomes []",
		src:    "a:\n  add:\n  - X\n  keep: 1\n",
		mutate: func(r *yaml.Node) { yamlnode.Value(yamlnode.Value(r, "a"), "add").Content = nil },
		want:   "a:\n  add: []\n  keep: 1\n",
	}, {
		name: "anchor patched where it is; its alias follows",
		src:  "-\n  name: a\n  sc: &sc\n    x: 1\n- name: b\n  sc: *sc\n",
		mutate: func(r *yaml.Node) {
			set(yamlnode.Value(r.Content[0], "sc"), "y", str("2"))
		},
		want: "-\n  name: a\n  sc: &sc\n    x: 1\n    y: \"2\"\n- name: b\n  sc: *sc\n",
	}, {
		name:   "CRLF line endings kept",
		src:    "a:\r\n  b: 1\r\nc: 2\r\n",
		mutate: func(r *yaml.Node) { set(yamlnode.Value(r, "a"), "d", str("x")) },
		want:   "a:\r\n  b: 1\r\n  d: x\r\nc: 2\r\n",
	}, {
		name:   "no newline at end of file",
		src:    "a:\n  b: 1",
		mutate: func(r *yaml.Node) { set(yamlnode.Value(r, "a"), "c", str("2")) },
		want:   "a:\n  b: 1\n  c: \"2\"",
	}, {
		name:   "key added to the mapping of a sequence item with one key",
		src:    "l:\n- name: a\n- name: b\n",
		mutate: func(r *yaml.Node) { set(yamlnode.Value(r, "l").Content[0], "x", str("y")) },
		want:   "l:\n- name: a\n  x: y\n- name: b\n",
	}, {
		name: "only the changed document is touched",
		src:  "a: 1   # one\n---\n# two\nb:   2\n",
		mutate: func(r *yaml.Node) {
			if yamlnode.Value(r, "a") != nil {
				setScalar(r, "a", str("3"))
			}
		},
		want: "a: \"3\"   # one\n---\n# two\nb:   2\n",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got, reformatted := rewriteWith(t, tc.src, tc.mutate)
			if got != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tc.want)
			}
			if len(reformatted) > 0 {
				t.Errorf("documents %v re-encoded whole", reformatted)
			}
		})
	}
}

// TestPatchFallback: a change the patcher cannot place (a block scalar that
// keeps its trailing blank lines) falls back to re-encoding the document,
// and the content is still right.
func TestPatchFallback(t *testing.T) {
	src := "--- # marker comment\na: |+\n  text\n\nb: 1\n"
	got, reformatted := rewriteWith(t, src, func(r *yaml.Node) {
		setScalar(r, "a", &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "other\n"})
	})
	if len(reformatted) != 1 {
		t.Errorf("want the document re-encoded, got %v", reformatted)
	}
	if n := strings.Count(got, "# marker comment"); n != 1 {
		t.Errorf("the comment on the --- line appears %d times:\n%s", n, got)
	}
	roots, err := decodeRoots([]byte(got))
	if err != nil || len(roots) != 1 {
		t.Fatalf("output does not parse: %v\n%s", err, got)
	}
	v, _ := manifest.Decode("", roots[0])
	if want := map[string]any{"a": "other\n", "b": int64(1)}; !reflect.DeepEqual(v, want) {
		t.Errorf("got %#v, want %#v", v, want)
	}
}

// FuzzRewrite mutates every document of arbitrary YAML (a key appended to
// each block mapping, booleans flipped, the first item of each sequence
// dropped) and checks that the rewritten stream decodes to the mutated
// trees, document by document, and never panics.
func FuzzRewrite(f *testing.F) {
	for _, s := range []string{
		"a: 1\n",
		"a:\n  b: [1, 2]\n  c:\n  - x: true\n    y: 'q'\n---\nz: {k: v}\n",
		"l:\n- - 1\n  - 2\n- {a: b}\n",
		"a: |\n  text\n   more\nb: >-\n  folded\n",
		"k: &x {a: 1}\nm: *x\n",
		"# c\n---\na:\n    b: false   # c\n...\n---\nc: 1",
		"apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - name: a\n    securityContext: {runAsNonRoot: false}\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		roots, err := decodeRoots([]byte(src))
		if err != nil || len(src) > 4096 {
			return
		}
		changed := map[int]*yaml.Node{}
		for i, r := range roots {
			if r == nil || hasAlias(r) {
				continue
			}
			mutateForFuzz(r, 0)
			changed[i] = r
		}
		if len(changed) == 0 {
			return
		}
		out, _, err := rewrite("fuzz.yaml", []byte(src), changed)
		if err != nil {
			return // refused (e.g. content on a --- line): the file is left alone
		}
		got, err := decodeRoots(out)
		if err != nil {
			t.Fatalf("output does not parse: %v\ninput:\n%s\noutput:\n%s", err, src, out)
		}
		var nonNil []*yaml.Node
		for _, g := range got {
			if g != nil {
				nonNil = append(nonNil, g)
			}
		}
		var want []*yaml.Node
		for i, r := range roots {
			if r != nil {
				if c, ok := changed[i]; ok {
					r = c
				}
				want = append(want, r)
			}
		}
		if len(nonNil) != len(want) {
			t.Fatalf("%d documents, want %d\ninput:\n%s\noutput:\n%s", len(nonNil), len(want), src, out)
		}
		for i := range want {
			a, err1 := manifest.Decode("", nonNil[i])
			b, err2 := manifest.Decode("", want[i])
			if (err1 == nil) != (err2 == nil) || !reflect.DeepEqual(a, b) {
				t.Fatalf("document %d decodes to %#v, want %#v\ninput:\n%s\noutput:\n%s", i+1, a, b, src, out)
			}
		}
	})
}

func hasAlias(n *yaml.Node) bool {
	if n.Kind == yaml.AliasNode || n.Anchor != "" {
		return true
	}
	for _, c := range n.Content {
		if hasAlias(c) {
			return true
		}
	}
	return false
}

func mutateForFuzz(n *yaml.Node, depth int) {
	if depth > 20 {
		return
	}
	switch n.Kind {
	case yaml.MappingNode:
		for i := 1; i < len(n.Content); i += 2 {
			mutateForFuzz(n.Content[i], depth+1)
		}
		if yamlnode.Value(n, "kilnfuzz") == nil {
			n.Content = append(n.Content, str("kilnfuzz"), str("added"))
		}
	case yaml.SequenceNode:
		for _, c := range n.Content {
			mutateForFuzz(c, depth+1)
		}
		if len(n.Content) > 1 {
			n.Content = n.Content[1:]
		}
	case yaml.ScalarNode:
		if isBool(n, true) {
			n.Value = "false"
		} else if isBool(n, false) {
			n.Value = "true"
		}
	}
}

func TestMergeKeysDeclined(t *testing.T) {
	src := "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - <<: &base {securityContext: {readOnlyRootFilesystem: true}}\n    name: a\n    image: x\n"
	objs, errs := manifest.Parse("p.yaml", []byte(src))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	notes := fixObject(objs[0], []rules.Finding{{Rule: "psa/allowPrivilegeEscalation", Fix: &rules.Fix{Action: rules.FixNoPrivilegeEscalation}}}, Options{})
	if len(notes) != 0 {
		t.Errorf("a pod spec with a merge key was changed: %v", notes)
	}
}
