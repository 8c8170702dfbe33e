// Package rendercache remembers across runs what rendering one unit of
// discovery gave (a kustomize build, a chart with its values, a
// HelmRelease), in kiln lint's content cache (manifest.Cache), as a build
// cache remembers a compilation: a record is found by what the render is
// (the unit, its options, kiln's settings that reach rendering, the
// record's version) and holds, beside the objects and warnings the render
// gave, the dependencies it read (every file, by path and digest; every
// input object or outside answer, by name and digest). A record whose
// dependencies are not all as they were is stale: the unit renders again
// and its record is replaced. Restored objects carry the same positions,
// units and origins, so output is the same byte for byte.
//
// Rendering code (package discover) decides what it may remember: only a
// render that succeeded, whose every input it recorded, and that printed
// nothing it cannot replay.
package rendercache

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"hash"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kilnhq/kiln/internal/pathkey"
	"github.com/kilnhq/kiln/manifest"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// version changes whenever what a record holds, or what a render makes
// of its inputs, does.
const version = "kiln-render-v1"

// Store is the render cache of one run over a manifest.Cache. A nil Store
// remembers nothing (--no-cache). It is safe for use by many goroutines.
type Store struct {
	cache manifest.Cache
	// wd is the working directory: files below it are named relative to
	// it in records, so that two copies of a tree (kiln diff's revision,
	// read from its own copy) share them.
	wd string

	mu      sync.Mutex
	pending []held

	hits, misses atomic.Int64
}

type held struct {
	key  [32]byte
	data []byte
}

// New returns a Store over c; nil when c is nil.
func New(c manifest.Cache) *Store {
	if c == nil {
		return nil
	}
	return &Store{cache: c, wd: pathkey.Real(".")}
}

// Stats returns how many lookups found a record still valid and how many
// did not.
func (s *Store) Stats() (hits, misses int64) {
	if s == nil {
		return 0, 0
	}
	return s.hits.Load(), s.misses.Load()
}

// Key builds a record's key from the parts of what a render is.
type Key struct{ h hash.Hash }

// NewKey starts the key of a render of kind ("kustomize", "chart", ...).
func NewKey(kind string) *Key {
	k := &Key{h: sha256.New()}
	k.Add(version, kind)
	return k
}

// Add adds strings to the key, each delimited.
func (k *Key) Add(parts ...string) *Key {
	var n [binary.MaxVarintLen64]byte
	for _, p := range parts {
		k.h.Write(n[:binary.PutUvarint(n[:], uint64(len(p)))])
		io.WriteString(k.h, p)
	}
	return k
}

// AddBytes adds a byte string to the key.
func (k *Key) AddBytes(b []byte) *Key { return k.Add(string(b)) }

// Sum returns the key.
func (k *Key) Sum() [32]byte { return [32]byte(k.h.Sum(nil)) }

// Dependency kinds: a file, named as the record names it; anything else
// a render read, named by the renderer, validated by the renderer.
const (
	DepFile  byte = 'f'
	DepStat  byte = 's' // whether a path exists and is a directory
	DepTree  byte = 't' // every file below a directory, by name and digest
	DepInput byte = 'i'
)

// Dep is one thing a render read and its digest.
type Dep struct {
	Kind byte
	Name string
	Sum  [32]byte
}

// Deps collects what one render reads, for its record; safe for use by
// many goroutines. Its zero value is ready.
type Deps struct {
	mu   sync.Mutex
	list []Dep
	seen map[string]bool
	// unkeyed is set once the render read something no record can
	// validate: it is not remembered.
	unkeyed bool
}

// absentSum stands for a file that does not exist or cannot be read.
var absentSum = sha256.Sum256([]byte("kiln-render: absent"))

// FileSum returns the digest of the file at path (absentSum if it cannot
// be read).
func FileSum(path string) [32]byte {
	data, err := os.ReadFile(path)
	if err != nil {
		return absentSum
	}
	return sha256.Sum256(data)
}

// File records the file at path (absolute, or as the render named it),
// with data the bytes the render read (nil: read them now).
func (d *Deps) File(s *Store, path string, data []byte) {
	if d == nil || s == nil {
		return
	}
	name := s.name(path)
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.seen["f"+name] {
		return
	}
	sum := absentSum
	if data != nil {
		sum = sha256.Sum256(data)
	} else {
		sum = FileSum(path)
	}
	d.add(Dep{Kind: DepFile, Name: name, Sum: sum})
}

// Stat records whether path exists and is a directory (kustomize probes
// for a kustomization file's names so).
func (d *Deps) Stat(s *Store, path string) {
	if d == nil || s == nil {
		return
	}
	name := s.name(path)
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.seen["s"+name] {
		d.add(Dep{Kind: DepStat, Name: name, Sum: statSum(path)})
	}
}

// Tree records every file below dir (a chart's directory, which Helm's
// loader reads whole); a tree with a symbolic link is not recorded (the
// loader follows it), and the render is then not remembered.
func (d *Deps) Tree(s *Store, dir string) {
	if d == nil || s == nil {
		return
	}
	sum, ok := treeSum(dir)
	if !ok {
		d.Unkeyed()
		return
	}
	name := s.name(dir)
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.seen["t"+name] {
		d.add(Dep{Kind: DepTree, Name: name, Sum: sum})
	}
}

// statSum is what Stat records of path.
func statSum(path string) [32]byte {
	fi, err := os.Stat(path)
	switch {
	case err != nil:
		return absentSum
	case fi.IsDir():
		return sha256.Sum256([]byte("kiln-render: directory"))
	}
	return sha256.Sum256([]byte("kiln-render: file"))
}

// treeSum hashes the names and contents of every file below dir; ok is
// false for a tree that cannot be read or holds a symbolic link.
func treeSum(dir string) (sum [32]byte, ok bool) {
	h := sha256.New()
	ok = true
	err := filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.Type()&fs.ModeSymlink != 0 {
			ok = false
			return filepath.SkipAll
		}
		if e.IsDir() {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		fsum := sha256.Sum256(data)
		io.WriteString(h, filepath.ToSlash(rel)+"\x00")
		h.Write(fsum[:])
		return nil
	})
	if err != nil || !ok {
		return [32]byte{}, false
	}
	return [32]byte(h.Sum(nil)), true
}

// Input records something else the render read: name says what (the
// renderer validates it on lookup), sum what it was.
func (d *Deps) Input(name string, sum [32]byte) {
	if d == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.seen["i"+name] {
		return
	}
	d.add(Dep{Kind: DepInput, Name: name, Sum: sum})
}

// Unkeyed says the render read something no record can validate.
func (d *Deps) Unkeyed() {
	if d == nil {
		return
	}
	d.mu.Lock()
	d.unkeyed = true
	d.mu.Unlock()
}

func (d *Deps) add(dep Dep) {
	if d.seen == nil {
		d.seen = map[string]bool{}
	}
	d.seen[string(dep.Kind)+dep.Name] = true
	d.list = append(d.list, dep)
}

// List returns the dependencies recorded, in the order read; ok is false
// when the render read something unkeyed.
func (d *Deps) List() (deps []Dep, ok bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]Dep(nil), d.list...), !d.unkeyed
}

// name is how a record names the file at path: relative to the working
// directory when below it, else absolute.
func (s *Store) name(path string) string {
	abs := pathkey.Real(path)
	if rel, err := filepath.Rel(s.wd, abs); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return filepath.ToSlash(rel)
	}
	return abs
}

// path turns a record's file name back into a path to read.
func (s *Store) path(name string) string {
	if filepath.IsAbs(name) {
		return name
	}
	return filepath.Join(s.wd, filepath.FromSlash(name))
}

// Path returns the absolute path (pathkey.Real's form) a record's file
// name stands for here.
func (s *Store) Path(name string) string { return pathkey.Real(s.path(name)) }

// Name returns how a record names the file at path (relative to the
// working directory when below it).
func (s *Store) Name(path string) string { return s.name(path) }

// slots is how many records one key keeps: renders of one unit from
// different inputs (kiln diff's two sides, the last few edits) each keep
// theirs. A miss replaces an empty slot, else the one written longest ago.
const slots = 4

// Slot is where a render's record goes after a miss (Lookup).
type Slot struct {
	key [32]byte
	ok  bool
}

func slotKey(key [32]byte, i int) [32]byte {
	return sha256.Sum256(append(key[:], byte(i)))
}

// Lookup returns a record under key whose dependencies are as they were:
// files read again, inputs through input (which returns the digest an
// input has now; false: it cannot tell). Without one (nil: render the
// unit), slot is where its record is to go.
func (s *Store) Lookup(key [32]byte, input func(name string) ([32]byte, bool)) (rec *Record, slot Slot) {
	if s == nil {
		return nil, Slot{}
	}
	free, oldest := -1, 0
	oldestAt := int64(math.MaxInt64)
	for i := range slots {
		r, ok := Decode(s.cache.Get(slotKey(key, i)))
		switch {
		case !ok:
			if free < 0 {
				free = i
			}
		case s.valid(r.Deps, input):
			s.hits.Add(1)
			return r, Slot{}
		case r.At < oldestAt:
			oldest, oldestAt = i, r.At
		}
	}
	s.misses.Add(1)
	if free < 0 {
		free = oldest
	}
	return nil, Slot{key: slotKey(key, free), ok: true}
}

func (s *Store) valid(deps []Dep, input func(string) ([32]byte, bool)) bool {
	for _, d := range deps {
		switch d.Kind {
		case DepFile:
			if FileSum(s.path(d.Name)) != d.Sum {
				return false
			}
		case DepStat:
			if statSum(s.path(d.Name)) != d.Sum {
				return false
			}
		case DepTree:
			if sum, ok := treeSum(s.path(d.Name)); !ok || sum != d.Sum {
				return false
			}
		case DepInput:
			if input == nil {
				return false
			}
			if sum, ok := input(d.Name); !ok || sum != d.Sum {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// Put stores rec in slot now.
func (s *Store) Put(slot Slot, rec *Record) {
	if s == nil || !slot.ok {
		return
	}
	rec.At = time.Now().UnixNano()
	if data, err := rec.Encode(); err == nil {
		s.cache.Put(slot.key, data)
	}
}

// Hold keeps rec to store in slot at Commit: for renders whose output on
// stderr is said for several at once (kustomize's), known only once all
// of them are done.
func (s *Store) Hold(slot Slot, rec *Record) {
	if s == nil || !slot.ok {
		return
	}
	rec.At = time.Now().UnixNano()
	data, err := rec.Encode()
	if err != nil {
		return
	}
	s.mu.Lock()
	s.pending = append(s.pending, held{slot.key, data})
	s.mu.Unlock()
}

// Commit stores the records held since the last Commit when keep is set
// (nothing was said that a record cannot replay), else drops them.
func (s *Store) Commit(keep bool) {
	if s == nil {
		return
	}
	s.mu.Lock()
	pending := s.pending
	s.pending = nil
	s.mu.Unlock()
	if !keep {
		return
	}
	for _, h := range pending {
		s.cache.Put(h.key, h.data)
	}
}

// Object is a rendered object as a record holds it.
type Object struct {
	File, Unit, Via, ViaIgnore, Cluster string
	Doc                                 int
	Node                                *yaml.Node
	// Parts are the parts of Node the object may let go of and read again
	// from their file (manifest.Detachable), as the renderer says.
	Parts []Part
}

// Part is a detachable part of a recorded object's tree: its place among
// the tree's parts of that kind (At, the renderer's count), and where it
// is written (File as a record names it, the document and the part's
// place in it) with its TreeSum.
type Part struct {
	At, Doc, Slot int
	File          string
	Sum           [32]byte
}

// Record is what one render gave and what it read.
type Record struct {
	Deps    []Dep
	Objects []Object
	// Warnings are the render's warnings: manifest.Errors, or messages.
	Warnings []error
	// Extra is what else the renderer keeps (the files a build read).
	Extra []string
	// At is when the record was written (Unix nanoseconds): the oldest of
	// a key's slots goes first.
	At int64
}

// ObjectOf returns what a record holds of a rendered object.
func ObjectOf(o *manifest.Object) Object {
	return Object{File: o.File, Unit: o.Unit, Via: o.Via, ViaIgnore: o.ViaIgnore, Cluster: o.Cluster, Doc: o.Doc, Node: o.Node()}
}

// Make returns the object again, as the render made it, with the parts
// of its tree it may let go of.
func (ob Object) Make(parts ...manifest.Detachable) (*manifest.Object, error) {
	o, err := manifest.NewRenderedObject(ob.File, ob.Unit, ob.Doc, ob.Node, parts...)
	if err != nil {
		return nil, err
	}
	o.Via, o.ViaIgnore, o.Cluster = ob.Via, ob.ViaIgnore, ob.Cluster
	return o, nil
}

// Objects returns the record's objects made again; ok is false if one
// cannot be (the record is then of no use).
func (r *Record) MakeObjects() ([]*manifest.Object, bool) {
	out := make([]*manifest.Object, 0, len(r.Objects))
	for _, ob := range r.Objects {
		o, err := ob.Make()
		if err != nil {
			return nil, false
		}
		out = append(out, o)
	}
	return out, true
}

// errUnrecordable is a record that cannot be written faithfully.
var errUnrecordable = errors.New("rendercache: not recordable")
