// Package baseline keeps the findings a repository already has, so that a
// run reports only new ones (kiln lint --baseline, --new-from-rev): each
// finding is known by a key that ordinary edits do not change (its rule,
// its object's identity, its field and its message with positions and
// moving counts taken out; never a line number), and a baseline holds how
// many findings of each key there are.
//
// The file (kiln lint --write-baseline) is JSON lines: a header line
// {"kiln":"baseline","version":1}, then one entry per key, sorted, with a
// "count" when the key is found more than once. One line per entry keeps
// its diff reviewable.
package baseline

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/kilnhq/kiln/internal/atomicfile"
	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules"
)

// Version is the version of the file format this package writes and reads.
const Version = 1

// Key is what a finding is known by across edits.
type Key struct {
	Rule string
	// Object is the finding's object (zero for a finding on a file).
	Object manifest.Ref
	// Source is the file of a rendered object (the chart's template, the
	// kustomization's resource) or of a finding on no object; "" for an
	// object of a plain manifest, which its identity names wherever it
	// moves. Slash-separated, relative to the run's root.
	Source  string
	Field   string
	Message string
}

// Keyer makes the keys of one run's findings.
type Keyer struct {
	// Root is the directory that the keys' file names are relative to: the
	// current directory of the run (""), or where a Git revision was
	// materialised.
	Root string
	// Plain reports whether a file was read as a plain manifest (its
	// objects are known by their identity alone); nil: none was.
	Plain func(file string) bool
}

// Of is the key of f.
func (k Keyer) Of(f rules.Finding) Key {
	msg := f.Message
	if k.Root != "" {
		// Other files a message names, as the run names them: under the root.
		msg = strings.ReplaceAll(msg, k.Root+string(filepath.Separator), "")
	}
	key := Key{Rule: f.Rule, Object: f.Object, Field: f.Field, Message: Normalize(msg)}
	if f.Object.Kind == "" || f.Object.Name == "" || k.Plain == nil || !k.Plain(f.Pos.File) {
		key.Source = k.rel(f.Pos.File)
	}
	return key
}

// rel names file relative to the root, slash-separated.
func (k Keyer) rel(file string) string {
	if file == "" || file == manifest.Stdin {
		return file
	}
	if filepath.IsAbs(file) {
		root := k.Root
		if root == "" {
			root, _ = os.Getwd()
		}
		if r, err := filepath.Rel(root, file); err == nil && !strings.HasPrefix(r, "..") {
			file = r
		}
	}
	return filepath.ToSlash(filepath.Clean(file))
}

var (
	// positionRE is a file position in a message: path:line:col.
	positionRE = regexp.MustCompile(`([^\s:()"',]+):\d+:\d+`)
	// lineRE is "line 12", "lines 3-9".
	lineRE = regexp.MustCompile(`\b(lines?) \d+(-\d+)?\b`)
	// countRE is a count of other objects, which moves as they are added:
	// "34 objects", "41 more".
	countRE = regexp.MustCompile(`\b\d+ (more|objects?|others?|copies)\b`)
)

// Normalize takes out of a message what ordinary edits change: file
// positions keep only their file, line numbers and counts of other objects
// become "N".
func Normalize(msg string) string {
	msg = positionRE.ReplaceAllString(msg, "$1")
	msg = lineRE.ReplaceAllString(msg, "$1 N")
	return countRE.ReplaceAllString(msg, "N $1")
}

// Baseline is how many findings of each key a repository has.
type Baseline struct {
	counts map[Key]int
}

// New returns an empty baseline.
func New() *Baseline { return &Baseline{counts: map[Key]int{}} }

// Add counts one finding of key.
func (b *Baseline) Add(key Key) { b.counts[key]++ }

// Len is the number of findings the baseline holds.
func (b *Baseline) Len() int {
	n := 0
	for _, c := range b.counts {
		n += c
	}
	return n
}

// Of returns the baseline of res's unsuppressed findings.
func Of(res *rules.Result, k Keyer) (*Baseline, error) {
	b := New()
	err := res.Each(func(f rules.Finding) error {
		if f.Suppressed == nil {
			b.Add(k.Of(f))
		}
		return nil
	})
	return b, err
}

// entry is one line of the file.
type entry struct {
	Rule    string `json:"rule"`
	Object  string `json:"object,omitempty"`
	Source  string `json:"source,omitempty"`
	Field   string `json:"field,omitempty"`
	Message string `json:"message"`
	Count   int    `json:"count,omitempty"`
}

// header is the file's first line.
type header struct {
	Kiln    string `json:"kiln"`
	Version int    `json:"version"`
}

// objectString writes an object as "apiVersion Kind namespace/name" (or
// "apiVersion Kind name" when cluster-scoped).
func objectString(r manifest.Ref) string {
	if r.Kind == "" && r.Name == "" {
		return ""
	}
	name := r.Name
	if r.Namespace != "" {
		name = r.Namespace + "/" + name
	}
	return r.APIVersion + " " + r.Kind + " " + name
}

func parseObject(s string) (manifest.Ref, bool) {
	if s == "" {
		return manifest.Ref{}, true
	}
	f := strings.Split(s, " ")
	if len(f) != 3 {
		return manifest.Ref{}, false
	}
	r := manifest.Ref{APIVersion: f[0], Kind: f[1], Name: f[2]}
	if ns, name, ok := strings.Cut(f[2], "/"); ok {
		r.Namespace, r.Name = ns, name
	}
	return r, true
}

// compareKeys orders a file's entries: by rule, object, source, field and
// message.
func compareKeys(a, b Key) int {
	return cmp.Or(cmp.Compare(a.Rule, b.Rule), cmp.Compare(objectString(a.Object), objectString(b.Object)),
		cmp.Compare(a.Source, b.Source), cmp.Compare(a.Field, b.Field), cmp.Compare(a.Message, b.Message))
}

// Encode writes the baseline as its file: the same baseline, the same bytes.
func (b *Baseline) Encode(w io.Writer) error {
	keys := make([]Key, 0, len(b.counts))
	for k := range b.counts {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, compareKeys)
	bw := bufio.NewWriter(w)
	line := func(v any) {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		enc.Encode(v) // plain strings and ints: cannot fail
		bw.Write(buf.Bytes())
	}
	line(header{Kiln: "baseline", Version: Version})
	for _, k := range keys {
		e := entry{Rule: k.Rule, Object: objectString(k.Object), Source: k.Source, Field: k.Field, Message: k.Message}
		if c := b.counts[k]; c > 1 {
			e.Count = c
		}
		line(e)
	}
	return bw.Flush()
}

// WriteFile writes the baseline to path, atomically.
func (b *Baseline) WriteFile(path string) error {
	var buf bytes.Buffer
	if err := b.Encode(&buf); err != nil {
		return err
	}
	if err := atomicfile.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("writing the baseline: %w", err)
	}
	return nil
}

// ReadFile reads a baseline file; a problem in it is a *manifest.Error at
// its line.
func ReadFile(path string) (*Baseline, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &manifest.Error{Pos: manifest.Position{File: path}, Msg: fmt.Sprintf("cannot read the baseline: %v (write one with kiln lint --write-baseline %s)", errorText(err), path)}
	}
	return Decode(path, data)
}

// errorText is an error without the path the message names already.
func errorText(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// Decode reads a baseline file's content; file names it in errors.
func Decode(file string, data []byte) (*Baseline, error) {
	b := New()
	at := func(line int, format string, args ...any) error {
		return &manifest.Error{Pos: manifest.Position{File: file, Line: line, Column: 1}, Msg: fmt.Sprintf(format, args...)}
	}
	lines := strings.Split(string(data), "\n")
	sawHeader := false
	for i, text := range lines {
		n := i + 1
		if strings.TrimSpace(text) == "" {
			continue
		}
		dec := json.NewDecoder(strings.NewReader(text))
		dec.DisallowUnknownFields()
		if !sawHeader {
			var h header
			if err := dec.Decode(&h); err != nil || h.Kiln != "baseline" {
				return nil, at(n, `not a kiln baseline: the first line must be {"kiln":"baseline","version":%d} (write one with kiln lint --write-baseline)`, Version)
			}
			if h.Version != Version {
				return nil, at(n, "baseline version %d: this kiln reads version %d (write it again with kiln lint --write-baseline)", h.Version, Version)
			}
			sawHeader = true
			continue
		}
		var e entry
		if err := dec.Decode(&e); err != nil {
			return nil, at(n, "not a baseline entry (one JSON object a line with rule, object, source, field, message and count): %s", jsonProblem(err))
		}
		if dec.More() {
			return nil, at(n, "more than one JSON value on the line: write one entry a line")
		}
		ref, ok := parseObject(e.Object)
		switch {
		case e.Rule == "":
			return nil, at(n, "the entry has no rule")
		case !ok:
			return nil, at(n, "object %q: write it as \"apiVersion Kind namespace/name\" (or \"apiVersion Kind name\")", e.Object)
		case e.Count < 0:
			return nil, at(n, "count %d: a count is 2 or more (1 when left out)", e.Count)
		}
		k := Key{Rule: e.Rule, Object: ref, Source: e.Source, Field: e.Field, Message: e.Message}
		if _, dup := b.counts[k]; dup {
			return nil, at(n, "the entry repeats an earlier one: give the earlier one a count instead")
		}
		b.counts[k] = max(e.Count, 1)
	}
	if !sawHeader {
		return nil, at(1, `empty baseline: the first line must be {"kiln":"baseline","version":%d} (write one with kiln lint --write-baseline)`, Version)
	}
	return b, nil
}

// jsonProblem says what is wrong with a line in plain words.
func jsonProblem(err error) string {
	msg := err.Error()
	if f, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
		return "unknown key " + f
	}
	if strings.Contains(msg, "cannot unmarshal") {
		return "a value has the wrong type (count is a number, the others strings)"
	}
	return msg
}

// Matcher tells which findings a baseline holds, a copy of a key at a time.
type Matcher struct {
	b     *Baseline
	keyer Keyer
	// left is what the latest reading of the findings has not matched yet.
	left map[Key]int
	// filter, when set, limits the baseline to the entries it accepts.
	filter func(Key) bool
}

// Matcher returns a matcher of the baseline for findings keyed by k.
func (b *Baseline) Matcher(k Keyer) *Matcher { return &Matcher{b: b, keyer: k} }

// Only limits the matcher to the entries keep accepts (those of a shard).
func (m *Matcher) Only(keep func(Key) bool) { m.filter = keep }

// Known starts a reading of the findings (rules.Result.Baseline calls it
// for each): the test it returns accepts, of the findings of a key, as many
// as the baseline holds, the first in order.
func (m *Matcher) Known() func(rules.Finding) bool {
	left := make(map[Key]int, len(m.b.counts))
	for k, c := range m.b.counts {
		if m.filter == nil || m.filter(k) {
			left[k] = c
		}
	}
	m.left = left
	return func(f rules.Finding) bool {
		k := m.keyer.Of(f)
		if left[k] == 0 {
			return false
		}
		left[k]--
		return true
	}
}

// Fixed counts the baseline's findings the latest complete reading did not
// find: fixed since the baseline was written.
func (m *Matcher) Fixed() int {
	n := 0
	for _, c := range m.left {
		n += c
	}
	return n
}

// Union adds to b the findings of o that b does not hold: of each key, the
// larger count.
func (b *Baseline) Union(o *Baseline) {
	for k, c := range o.counts {
		b.counts[k] = max(b.counts[k], c)
	}
}
