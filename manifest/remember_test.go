package manifest

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// memCache is a Cache in memory that counts what it is asked.
type memCache struct {
	m          map[[32]byte][]byte
	gets, puts int
}

func (c *memCache) Get(k [32]byte) []byte { c.gets++; return c.m[k] }
func (c *memCache) Put(k [32]byte, b []byte) {
	c.puts++
	c.m[k] = append([]byte(nil), b...)
}

// seen is what a judge reads of an object, to compare a parsed and a
// restored one.
type seen struct {
	Ref         Ref
	Pos         Position
	Labels      map[string]string
	Annotations map[string]string
	Content     map[string]any
	Notes       []Note
	Image       Position
	Digest      [32]byte
}

func readSeen(t *testing.T, path string, cache Cache) (parts [][]seen, src *Source) {
	t.Helper()
	fn := func(objs []*Object) {
		var part []seen
		for _, o := range objs {
			notes := o.Notes() // before Content: a restored object decodes when asked
			c, err := o.Content()
			if err != nil {
				t.Fatalf("%s: %v", o.Pos(), err)
			}
			d, _ := o.Digest()
			part = append(part, seen{o.Ref(), o.Pos(), o.Labels, o.Annotations, c, notes,
				o.Locate("spec.containers[0].image"), d})
		}
		parts = append(parts, part)
	}
	if cache == nil {
		return parts, ReadFileEach(path, nil, 2, fn)
	}
	return parts, ReadFileRemembered(path, 2, fn, cache)
}

// TestReadFileRemembered: a file read again from the record gives what
// parsing it gives (parts, positions, content, notes); changed bytes, a
// damaged record or a file with a problem are parsed, never restored.
func TestReadFileRemembered(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	body := pod + "---\n# a comment\n" + `apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: a, labels: {x: "1"}, annotations: {b: c}}
  data: {on: yes}
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: b}
---
apiVersion: v1
kind: Pod
metadata: {name: two, namespace: ns}
spec:
  containers:
  - name: c
    image: nginx
`
	if err := os.WriteFile(good, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	want, _ := readSeen(t, good, nil)
	if len(want) < 2 {
		t.Fatalf("want the file read in several parts, got %d", len(want))
	}
	cache := &memCache{m: map[[32]byte][]byte{}}
	first, _ := readSeen(t, good, cache)
	if cache.puts != 1 || !reflect.DeepEqual(first, want) {
		t.Fatalf("first read: %d records written; objects differ from ReadFileEach's: %v", cache.puts, !reflect.DeepEqual(first, want))
	}
	var rec []byte
	for _, r := range cache.m {
		rec = r
	}
	restored, ok := restoreParsed(good, rec)
	if !ok || len(restored) != len(want) {
		t.Fatalf("the record does not restore: ok=%v, %d parts", ok, len(restored))
	}
	again, _ := readSeen(t, good, cache)
	if cache.puts != 1 {
		t.Fatalf("the unchanged file was parsed again (%d records written)", cache.puts)
	}
	if !reflect.DeepEqual(again, want) {
		t.Fatalf("restored objects differ from parsed ones:\n%+v\n%+v", again, want)
	}

	// A damaged record (cut short, or one byte off) is never restored.
	for k := range cache.m {
		for _, damaged := range [][]byte{rec[:len(rec)-1], append(append([]byte(nil), rec...), 0), {0xff}} {
			cache.m[k] = damaged
			got, _ := readSeen(t, good, cache)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("with a damaged record (%d bytes) the objects differ", len(damaged))
			}
		}
	}

	// Changed bytes are another key; a file with a problem is not remembered.
	if err := os.WriteFile(good, []byte(body+"# edited\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := cache.puts
	readSeen(t, good, cache)
	if cache.puts != before+1 {
		t.Fatalf("changed bytes: want a new record, got %d", cache.puts-before)
	}
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte(pod+"---\nkind: [\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before = cache.puts
	for range 2 {
		if _, src := readSeen(t, bad, cache); len(src.Errs) == 0 {
			t.Fatalf("bad.yaml: want its parse error reported every time")
		}
	}
	if cache.puts != before {
		t.Fatalf("a file with a parse error was remembered")
	}
}

// FuzzRestoreParsed checks that no record makes restoring panic or give an
// object without a document or a line.
func FuzzRestoreParsed(f *testing.F) {
	var rec []byte
	objs, _ := Parse("f.yaml", []byte(pod))
	rec = append(rec, 1, byte(len(objs)))
	for _, o := range objs {
		rec = appendParsed(rec, o)
	}
	f.Add(rec)
	f.Add([]byte{0})
	f.Add([]byte{1, 1})
	f.Fuzz(func(t *testing.T, data []byte) {
		parts, ok := restoreParsed("f.yaml", data)
		if !ok {
			return
		}
		for _, p := range parts {
			if len(p) == 0 {
				t.Fatal("an empty part")
			}
			for _, o := range p {
				if o.Doc < 0 || o.docLines[0] < 1 || o.File != "f.yaml" {
					t.Fatalf("restored an object without a place: %+v", o.Pos())
				}
			}
		}
	})
}
