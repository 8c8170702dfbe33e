package rendercache

import (
	"crypto/sha256"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"testing"

	"github.com/kilnhq/kiln/manifest"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// memCache is a manifest.Cache in memory.
type memCache struct {
	mu sync.Mutex
	m  map[[32]byte][]byte
}

func (c *memCache) Get(key [32]byte) []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[key]
}

func (c *memCache) Put(key [32]byte, data []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[[32]byte][]byte{}
	}
	c.m[key] = data
}

func tree(t testing.TB, src string) *yaml.Node {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Content[0]
}

func sampleRecord(t testing.TB) *Record {
	return &Record{
		Deps: []Dep{{Kind: DepFile, Name: "apps/web.yaml", Sum: sha256.Sum256([]byte("x"))}, {Kind: DepInput, Name: "find\x00ConfigMap\x00a\x00b"}},
		Objects: []Object{{File: "apps/web.yaml", Unit: "apps", Via: "Kustomization flux-system/apps", ViaIgnore: "psa/*", Cluster: "clusters/prod", Doc: 2,
			Node:  tree(t, "apiVersion: v1 # the version\nkind: ConfigMap\nmetadata:\n  name: web\ndata:\n  a: \"1\"\n  b: [x, y]\n"),
			Parts: []Part{{At: 1, Doc: 2, Slot: 0, File: "crds/big.yaml", Sum: sha256.Sum256([]byte("schema"))}}}},
		Warnings: []error{&manifest.Error{Pos: manifest.Position{File: "apps/web.yaml", Line: 3, Column: 1}, Msg: "warning: something"}, errors.New("warning: kustomize: a line")},
		Extra:    []string{"", "apps/web.yaml"},
		At:       1765000000000000000,
	}
}

// TestRecordRoundTrip: what Decode reads is what Encode was given, trees
// with every position and comment.
func TestRecordRoundTrip(t *testing.T) {
	for _, rec := range []*Record{{}, sampleRecord(t)} {
		data, err := rec.Encode()
		if err != nil {
			t.Fatal(err)
		}
		got, ok := Decode(data)
		if !ok {
			t.Fatalf("Decode of a whole record failed")
		}
		if got.At != rec.At || !reflect.DeepEqual(got.Deps, rec.Deps) || !reflect.DeepEqual(got.Extra, rec.Extra) || len(got.Objects) != len(rec.Objects) || len(got.Warnings) != len(rec.Warnings) {
			t.Fatalf("round trip: got %+v, want %+v", got, rec)
		}
		for i := range rec.Objects {
			w, g := rec.Objects[i], got.Objects[i]
			if manifest.TreeSum(w.Node) != manifest.TreeSum(g.Node) || w.Node.Content[1].LineComment != g.Node.Content[1].LineComment {
				t.Errorf("object %d: tree differs", i)
			}
			w.Node, g.Node = nil, nil
			if !reflect.DeepEqual(w, g) {
				t.Errorf("object %d: got %+v, want %+v", i, g, w)
			}
		}
		for i := range rec.Warnings {
			if got.Warnings[i].Error() != rec.Warnings[i].Error() || reflect.TypeOf(got.Warnings[i]) != reflect.TypeOf(rec.Warnings[i]) && i == 0 {
				t.Errorf("warning %d: got %v, want %v", i, got.Warnings[i], rec.Warnings[i])
			}
		}
	}
}

// TestEncodeRefuses: a tree a record cannot hold faithfully is not
// recorded.
func TestEncodeRefuses(t *testing.T) {
	alias := tree(t, "a: &x 1\nb: *x\n")
	deep := &yaml.Node{Kind: yaml.ScalarNode, Value: "x"}
	for range maxDepth + 2 {
		deep = &yaml.Node{Kind: yaml.SequenceNode, Content: []*yaml.Node{deep}}
	}
	for name, n := range map[string]*yaml.Node{"alias": alias, "deep": deep, "nil": nil} {
		if _, err := (&Record{Objects: []Object{{Node: n}}}).Encode(); err == nil {
			t.Errorf("%s: encoded", name)
		}
	}
}

// TestDecodeDamaged: every truncation of a record, and a record with a
// byte changed where it can tell, is ignored, never a crash.
func TestDecodeDamaged(t *testing.T) {
	data, err := sampleRecord(t).Encode()
	if err != nil {
		t.Fatal(err)
	}
	for n := range len(data) {
		if _, ok := Decode(data[:n]); ok {
			t.Errorf("a record cut at %d of %d bytes decoded", n, len(data))
		}
	}
	if _, ok := Decode(append(append([]byte(nil), data...), 0)); ok {
		t.Error("a record with a trailing byte decoded")
	}
	for i := range data {
		d := append([]byte(nil), data...)
		d[i] ^= 0xff
		Decode(d) // must not panic
	}
}

func FuzzDecode(f *testing.F) {
	data, _ := sampleRecord(f).Encode()
	f.Add(data)
	f.Add([]byte{})
	f.Add([]byte{0, 1, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		rec, ok := Decode(data)
		if !ok {
			return
		}
		again, err := rec.Encode()
		if err != nil {
			t.Fatalf("a record decoded but does not encode: %v", err)
		}
		if _, ok := Decode(again); !ok {
			t.Fatal("a record decoded, encoded again, does not decode")
		}
	})
}

// TestLookup: a record is found while what it read is as it was, and
// missed once a file, a probe, a tree or an input changed; a damaged
// record is a miss.
func TestLookup(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	write := func(p, s string) {
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a.yaml", "a")
	write("chart/templates/x.yaml", "x")
	inputs := map[string][32]byte{"cm": sha256.Sum256([]byte("1"))}
	input := func(name string) ([32]byte, bool) { s, ok := inputs[name]; return s, ok }
	cases := []struct {
		name   string
		change func()
		hit    bool
	}{
		{"unchanged", func() {}, true},
		{"file edited", func() { write("a.yaml", "b") }, false},
		{"file back", func() { write("a.yaml", "a") }, true},
		{"probed path made", func() { write("kustomization.yml", "") }, false},
		{"probed path gone", func() { os.Remove("kustomization.yml") }, true},
		{"file added to a tree", func() { write("chart/templates/y.yaml", "y") }, false},
		{"file gone from a tree", func() { os.Remove("chart/templates/y.yaml") }, true},
		{"input changed", func() { inputs["cm"] = sha256.Sum256([]byte("2")) }, false},
		{"input back", func() { inputs["cm"] = sha256.Sum256([]byte("1")) }, true},
		{"input gone", func() { delete(inputs, "cm") }, false},
	}
	c := &memCache{}
	st := New(c)
	deps := &Deps{}
	deps.File(st, filepath.Join(dir, "a.yaml"), nil)
	deps.Stat(st, "kustomization.yml")
	deps.Tree(st, "chart")
	deps.Input("cm", inputs["cm"])
	list, ok := deps.List()
	if !ok {
		t.Fatal("deps unkeyed")
	}
	key := NewKey("test").Add("unit").Sum()
	_, slot := st.Lookup(key, input)
	st.Put(slot, &Record{Deps: list})
	for _, tc := range cases {
		tc.change()
		if rec, _ := st.Lookup(key, input); (rec != nil) != tc.hit {
			t.Errorf("%s: hit %v, want %v", tc.name, rec != nil, tc.hit)
		}
	}
	inputs["cm"] = sha256.Sum256([]byte("1"))
	for k, data := range c.m {
		c.Put(k, data[:len(data)-1])
	}
	if rec, _ := st.Lookup(key, input); rec != nil {
		t.Error("a damaged record was found")
	}
}

// TestSlots: one unit keeps the records of several inputs (kiln diff's
// two sides alternate, both found); past slots, the record written
// longest ago goes.
func TestSlots(t *testing.T) {
	st := New(&memCache{})
	key := NewKey("test").Add("unit").Sum()
	version := 0
	input := func(string) ([32]byte, bool) { return sha256.Sum256([]byte{byte(version)}), true }
	put := func() {
		rec, slot := st.Lookup(key, input)
		if rec != nil {
			t.Fatalf("version %d found before it was put", version)
		}
		st.Put(slot, &Record{Deps: []Dep{{Kind: DepInput, Name: "v", Sum: sha256.Sum256([]byte{byte(version)})}}})
	}
	found := func(v int) bool {
		version = v
		rec, _ := st.Lookup(key, input)
		return rec != nil
	}
	for v := range slots {
		version = v
		put()
	}
	for range 2 {
		for v := range slots {
			if !found(v) {
				t.Errorf("version %d of %d not found", v, slots)
			}
		}
	}
	version = slots
	put()
	if found(0) || !found(1) || !found(slots) {
		t.Errorf("after one version more: the oldest found %v, the next %v, the newest %v; want false, true, true", found(0), found(1), found(slots))
	}
}

// TestHoldCommit: held records are stored only when the renders that made
// them said nothing a record cannot say again.
func TestHoldCommit(t *testing.T) {
	c := &memCache{}
	st := New(c)
	k1, k2 := NewKey("t").Add("1").Sum(), NewKey("t").Add("2").Sum()
	_, s1 := st.Lookup(k1, nil)
	_, s2 := st.Lookup(k2, nil)
	st.Hold(s1, &Record{})
	st.Commit(false)
	st.Hold(s2, &Record{})
	st.Commit(true)
	r1, _ := st.Lookup(k1, nil)
	r2, _ := st.Lookup(k2, nil)
	if r1 != nil || r2 == nil {
		t.Errorf("after a dropped and a kept commit: k1 %v, k2 %v", r1 != nil, r2 != nil)
	}
	var none *Store
	_, s := none.Lookup(k1, nil)
	none.Hold(s, &Record{})
	none.Commit(true)
	if r, _ := none.Lookup(k1, nil); r != nil {
		t.Error("a nil store found a record")
	}
}

// TestTreeSymlink: a tree with a symbolic link is not keyed.
func TestTreeSymlink(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a"), []byte("a"), 0o644)
	if err := os.Symlink("a", filepath.Join(dir, "b")); err != nil {
		t.Skip(err)
	}
	d := &Deps{}
	d.Tree(New(&memCache{}), dir)
	if _, ok := d.List(); ok {
		t.Error("a tree with a symbolic link was keyed")
	}
}
