package manifest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf16"

	"github.com/kilnhq/kiln/internal/parallel"
	"github.com/kilnhq/kiln/internal/yamlnode"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Stdin is the path that names standard input.
const Stdin = "-"

// MaxFileSize bounds one input file (or stdin). The API server rejects
// requests over 3 MiB, so a larger manifest file is a bundle of many objects;
// past this size it is refused rather than risk unbounded memory.
const MaxFileSize = 32 << 20

// Source is one input file, read and split into objects.
type Source struct {
	// Path is the file's path as the user named it (or "-" for stdin; "<stdin>" in reports).
	Path    string
	Objects []*Object
	// Errs are the problems found in this file; objects in documents
	// without problems are still returned.
	Errs []error
	// Skipped are the documents that are not Kubernetes objects (neither
	// apiVersion nor kind: values files, compose files, patch lists).
	Skipped []Skipped
	// streamed counts the objects ReadFileEach handed out.
	streamed int
}

// Skipped is a document or file that is not linted, and why. Reason is
// one of a few fixed sentences (reports count files by it); Detail, when
// set, says what made this file fall under it.
type Skipped struct {
	Pos    Position
	Reason string
	Detail string
}

// AllSkipped reports whether every document of the file was skipped: the
// file holds no Kubernetes object and no error.
func (s *Source) AllSkipped() bool {
	return len(s.Skipped) > 0 && len(s.Objects) == 0 && s.streamed == 0 && len(s.Errs) == 0
}

// Set is everything read from a list of inputs.
type Set struct {
	Sources []*Source
	// Errs are problems not tied to one file's contents (a path that does not
	// exist, a directory without manifests).
	Errs []error
}

// DropSources frees the file contents kept to parse objects' YAML trees
// again. Objects read from files still answer Content and Locate (from
// their position index), but Node and Lookup return nil for them
// afterwards. kiln lint calls it once its input is read: rules need
// positions, not trees, and a large repository's bytes are then not held
// for the whole run.
func (s *Set) DropSources() {
	for _, src := range s.Sources {
		for _, o := range src.Objects {
			if o.src != nil {
				o.src.forget()
			}
		}
	}
}

// Objects returns all objects in input order.
func (s *Set) Objects() []*Object {
	var out []*Object
	for _, src := range s.Sources {
		out = append(out, src.Objects...)
	}
	return out
}

// Errors returns every problem, path errors first, then per file in input order.
func (s *Set) Errors() []error {
	out := append([]error(nil), s.Errs...)
	for _, src := range s.Sources {
		out = append(out, src.Errs...)
	}
	return out
}

// IsManifestFile reports whether a file name has a manifest extension.
func IsManifestFile(name string) bool {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}

// Expand turns paths into the list of files to read: files as given,
// directories walked recursively for *.yaml, *.yml and *.json in lexical
// order (skipping hidden files and directories), "-" kept as stdin.
func Expand(paths []string) ([]string, []error) {
	var files []string
	var errs []error
	seen := map[string]bool{}
	add := func(f string) {
		if !seen[f] {
			seen[f] = true
			files = append(files, f)
		}
	}
	for _, p := range paths {
		if p == Stdin {
			add(p)
			continue
		}
		info, err := os.Stat(p)
		if err != nil {
			errs = append(errs, &Error{Pos: Position{File: p}, Msg: "cannot read: " + PathErr(err)})
			continue
		}
		if !info.IsDir() {
			add(p)
			continue
		}
		n := 0
		err = WalkTree(p, func(path string, d fs.DirEntry) error {
			// Symlinked files are read (a loop fails to read and is reported);
			// symlinked directories are not followed.
			if !d.IsDir() && IsManifestFile(d.Name()) {
				add(path)
				n++
			}
			return nil
		}, func(path string, err error) {
			errs = append(errs, &Error{Pos: Position{File: path}, Msg: "cannot read: " + PathErr(err)})
		})
		if err != nil {
			errs = append(errs, &Error{Pos: Position{File: p}, Msg: err.Error()})
		}
		if n == 0 {
			errs = append(errs, &Error{Pos: Position{File: p}, Msg: "directory holds no *.yaml, *.yml or *.json files; name a directory with manifests"})
		}
	}
	return files, errs
}

// WalkRoot is the root to give filepath.WalkDir for a directory named on
// the command line: itself, or, when it is a symbolic link to a directory,
// the link with a trailing separator, so that the walk enters it (WalkDir
// follows no link, but a directory the user names is followed, as a shell
// does; links inside it still are not).
func WalkRoot(dir string) string {
	if fi, err := os.Lstat(dir); err == nil && fi.Mode()&fs.ModeSymlink != 0 && !strings.HasSuffix(dir, string(filepath.Separator)) {
		return dir + string(filepath.Separator)
	}
	return dir
}

// WalkTree walks the directory root (through WalkRoot: a symbolic link
// named as root is entered) in lexical order and calls visit for every
// entry, directories and root included, but hidden ones: a file or
// directory whose name starts with "." (.git, .github, .kiln.yaml,
// .gitlab-ci.yml) is tooling, not input, and is neither visited nor
// entered. visit returns filepath.SkipDir to skip a directory. An entry
// that cannot be read goes to unreadable and the walk goes on; the error
// returned is one visit returned or the walk met.
func WalkTree(root string, visit func(path string, d fs.DirEntry) error, unreadable func(path string, err error)) error {
	root = WalkRoot(root)
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			unreadable(path, err)
			return nil
		}
		if path != root && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		return visit(path, d)
	})
}

// PathErr is what went wrong with a file, without the operation and path
// an *fs.PathError repeats (kiln's messages put the path first).
func PathErr(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// Read reads every path (files, directories, "-" for stdin) in parallel and
// returns the objects in input order with every problem found. Reading goes
// on past bad files so that a user sees every problem at once.
func Read(paths []string, stdin io.Reader) *Set {
	files, errs := Expand(paths)
	set := ReadFiles(files, stdin)
	set.Errs = append(errs, set.Errs...)
	return set
}

// ReadFiles reads the files ("-" for stdin) in parallel, in input order.
func ReadFiles(files []string, stdin io.Reader) *Set {
	set := &Set{Sources: make([]*Source, len(files))}
	parallel.Each(len(files), func(i int) { set.Sources[i] = ReadFile(files[i], stdin) })
	return set
}

// ReadFile reads one file ("-" for stdin).
func ReadFile(path string, stdin io.Reader) *Source {
	var objs []*Object
	src := ReadFileEach(path, stdin, 0, func(o []*Object) { objs = append(objs, o...) })
	src.Objects, src.streamed = objs, 0
	return src
}

// ReadFileEach is ReadFile that hands the file's objects to fn as they are
// parsed, in input order, about n at a time (all at once for n <= 0),
// instead of keeping them in the Source, whose Objects stays empty: a large
// file then takes the memory of its bytes and n objects, not of all of
// them. The objects fn gets are complete (content decoded, positions
// indexed); the Source's Errs and Skipped are the whole file's.
func ReadFileEach(path string, stdin io.Reader, n int, fn func(objs []*Object)) *Source {
	return readEach(path, stdin, n, fn, nil)
}

// ReadBytes reads one file ("-" for stdin) without parsing it: its bytes,
// the name its objects are read under ("<stdin>" for stdin) and the error
// ReadFile would report (too large, unreadable). ParseSkipping(name, data)
// then reads what ReadFile would.
func ReadBytes(path string, stdin io.Reader) (data []byte, name string, err error) {
	if path == Stdin {
		name = "<stdin>"
		if stdin == nil {
			stdin = os.Stdin
		}
		data, err = io.ReadAll(io.LimitReader(stdin, MaxFileSize+1))
		if err != nil {
			return nil, name, &Error{Pos: Position{File: name}, Msg: "cannot read: " + err.Error()}
		}
		if len(data) > MaxFileSize {
			return nil, name, tooLarge(name)
		}
		return data, name, nil
	}
	if info, err := os.Stat(path); err == nil && info.Size() > MaxFileSize {
		return nil, path, tooLarge(path)
	}
	if data, err = os.ReadFile(path); err != nil {
		return nil, path, &Error{Pos: Position{File: path}, Msg: "cannot read: " + PathErr(err)}
	}
	return data, path, nil
}

// normalize turns what kubectl reads but the YAML parser does not into
// the same text, keeping every line where it was: UTF-16 with a byte-order
// mark becomes UTF-8, and a %YAML 1.2 directive is read as 1.1 (kubectl's
// reader takes it; the parser knows only 1.1).
func normalize(data []byte) []byte {
	if len(data) >= 2 && (data[0] == 0xFF && data[1] == 0xFE || data[0] == 0xFE && data[1] == 0xFF) {
		data = utf16ToUTF8(data)
	}
	if bytes.HasPrefix(data, []byte("%YAML 1.2")) || bytes.Contains(data, []byte("\n%YAML 1.2")) {
		data = bytes.ReplaceAll(data, []byte("%YAML 1.2"), []byte("%YAML 1.1"))
	}
	return data
}

// utf16ToUTF8 decodes UTF-16 text that starts with its byte-order mark.
func utf16ToUTF8(data []byte) []byte {
	big := data[0] == 0xFE
	data = data[2:]
	units := make([]uint16, 0, len(data)/2)
	for i := 0; i+1 < len(data); i += 2 {
		if big {
			units = append(units, uint16(data[i])<<8|uint16(data[i+1]))
		} else {
			units = append(units, uint16(data[i+1])<<8|uint16(data[i]))
		}
	}
	return []byte(string(utf16.Decode(units)))
}

func tooLarge(path string) error {
	return &Error{Pos: Position{File: path, Line: 1, Column: 1}, Msg: fmt.Sprintf("file is larger than %d MiB; split it into smaller files", MaxFileSize>>20)}
}

// Parse splits a YAML or JSON stream into objects. Empty documents and
// documents that are not Kubernetes objects (neither apiVersion nor kind)
// are skipped; List kinds are expanded into their items. A document that
// fails to parse ends the stream (YAML cannot resynchronise after a syntax
// error); an object missing one of apiVersion and kind is reported. A file
// that does not parse and is not meant as a manifest (template syntax, no
// apiVersion or kind anywhere) is skipped, not an error.
func Parse(file string, data []byte) ([]*Object, []error) {
	objs, _, errs := ParseSkipping(file, data)
	return objs, errs
}

// ParseSkipping is Parse that also returns the documents it skipped as not
// Kubernetes objects, with their positions and why.
func ParseSkipping(file string, data []byte) ([]*Object, []Skipped, []error) {
	var objs []*Object
	data = normalize(data)
	skipped, errs := parse(file, data, 0, func(o []*Object) { objs = append(objs, o...) })
	skipped, errs = notManifest(file, data, skipped, errs)
	return objs, skipped, errs
}

// ParseRendered is Parse for a tool's output (a chart's rendered
// template): what does not parse is an error whatever the text looks
// like, as it is for the tool itself.
func ParseRendered(file string, data []byte) ([]*Object, []error) {
	var objs []*Object
	_, errs := parse(file, normalize(data), 0, func(o []*Object) { objs = append(objs, o...) })
	return objs, errs
}

// parse is ParseSkipping that hands the objects to emit about batch at a
// time (all at once for batch <= 0), each group once its documents' end lines are
// known.
func parse(file string, data []byte, batch int, emit func([]*Object)) ([]Skipped, []error) {
	var objs []*Object
	var skipped []Skipped
	var errs []error
	if i := bytes.IndexByte(data, 0); i >= 0 {
		line, col := lineCol(data, i)
		return nil, []error{&Error{Pos: Position{File: file, Line: line, Column: col}, Msg: "file holds a NUL byte: it is binary, not YAML or JSON"}}
	}
	if !utf8Valid(data) {
		line, col := invalidUTF8At(data)
		return nil, []error{&Error{Pos: Position{File: file, Line: line, Column: col}, Msg: "file is not valid UTF-8 text; save it as UTF-8"}}
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	next, jsonStream := func(n *yaml.Node) error { return dec.Decode(n) }, false
	if isJSONStream(data) {
		next, jsonStream = jsonValues(file, data), true
	}
	in := interner{}
	docStart := 0 // objects of the previous document, whose end line is the next document's start
	markers := markerScan{data: data}
	for doc := 0; ; doc++ {
		var n yaml.Node
		err := next(&n)
		if err == io.EOF {
			break
		}
		if e, ok := err.(*Error); ok {
			errs = append(errs, e)
			break
		}
		if err != nil {
			errs = append(errs, yamlError(file, err))
			break
		}
		if len(n.Content) == 0 {
			continue
		}
		root := n.Content[0]
		if root.Kind == yaml.ScalarNode && root.ShortTag() == "!!null" {
			continue // an empty document, e.g. "---" followed by a comment
		}
		start := markers.startOf(root.Line)
		if jsonStream {
			start = root.Line
		}
		if doc == 0 {
			start = 1 // the first document starts with the file, comments and all
		}
		for _, o := range objs[docStart:] {
			o.docLines[1] = start
		}
		if batch > 0 && len(objs) >= batch {
			emit(objs) // every document so far has its end line
			objs, in = nil, interner{}
		}
		docStart = len(objs)
		if reason := notAnObject(root); reason != "" {
			skipped = append(skipped, Skipped{Pos: Position{File: file, Line: root.Line, Column: root.Column}, Reason: reason})
			continue
		}
		o, err := NewObject(file, doc, -1, root)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if isList(o) {
			items, ierrs := expandList(o)
			errs = append(errs, ierrs...)
			for _, it := range items {
				objs, errs = appendDecoded(objs, errs, it, start, in)
			}
			continue
		}
		objs, errs = appendDecoded(objs, errs, o, start, in)
	}
	if len(objs) > 0 {
		emit(objs)
	}
	return skipped, errs
}

// notManifest turns the problems of a file that was never meant as
// Kubernetes YAML into skips: a file of template syntax ({{ }}) outside a
// chart is not YAML yet, and a file that does not parse and names no
// apiVersion or kind anywhere (a database seed of `{score: 4}` lines, a
// broken tool config) is not a manifest at all. A file that names them
// and does not parse stays an error: it is a manifest kubectl would refuse.
// Only files the user's tree holds go through here; rendered output does
// not (Helm refuses what does not parse).
func notManifest(file string, data []byte, skipped []Skipped, errs []error) ([]Skipped, []error) {
	if len(errs) == 0 {
		return skipped, errs
	}
	posOf := func(err error) Position {
		if e, ok := err.(*Error); ok {
			return e.Pos
		}
		return Position{File: file}
	}
	switch {
	case bytes.HasPrefix(data, gitCryptHeader):
		return []Skipped{{Pos: Position{File: file, Line: 1, Column: 1}, Reason: gitCryptReason}}, nil
	case binaryKind(data) != "" && !namesObjectType(data):
		// A compressed or binary file under a manifest's name is no
		// manifest kiln can skip: what it holds is unknown, and a CI gate
		// must not pass it. (One that names an apiVersion or kind keeps
		// the reader's error, at the NUL byte.)
		return nil, []error{&Error{Pos: Position{File: file, Line: 1, Column: 1}, Msg: fmt.Sprintf("%s, not YAML or JSON text: kiln cannot read it (decompress it, or exclude it in .kiln.yaml's exclude: if it is not a manifest)", binaryKind(data))}}
	case isTemplate(data):
		for _, err := range errs {
			skipped = append(skipped, Skipped{Pos: posOf(err), Reason: templateReason})
		}
	case !namesObjectType(data):
		// The whole file is one thing: what its first documents were
		// matters no more.
		skipped = []Skipped{{Pos: posOf(errs[0]), Reason: NotKubernetesReason}}
	default:
		return skipped, errs
	}
	return skipped, nil
}

// gitCryptHeader starts every file git-crypt encrypts: a secret kept in
// the repository on purpose, which only a checkout with the key can read.
var gitCryptHeader = []byte("\x00GITCRYPT\x00")

// gitCryptReason is why a git-crypt file is skipped.
const gitCryptReason = "encrypted with git-crypt: kiln cannot read it (lint a checkout unlocked with git-crypt unlock to judge it)"

// templateReason is why a file of unrendered template syntax is skipped.
const templateReason = "a template ({{ }} syntax), not a manifest: lint the chart or the rendered output"

// NotKubernetesReason is why a file that does not parse and names no
// apiVersion or kind is skipped.
const NotKubernetesReason = "not a Kubernetes file (not valid YAML or JSON, and no apiVersion or kind in it)"

// binaryKind names the content of a file that is not text ("gzip-compressed
// data", "binary data"), or is "" for text: a known archive or compression
// format by its magic number, else a NUL byte in the first 8 KB (UTF-16 and
// UTF-32 with a byte order mark are text, as YAML reads them). Text in
// another encoding stays text: it is skipped as not Kubernetes, as before.
func binaryKind(data []byte) string {
	switch {
	case bytes.HasPrefix(data, []byte{0x1f, 0x8b}):
		return "gzip-compressed data"
	case bytes.HasPrefix(data, []byte("PK\x03\x04")):
		return "a zip archive"
	case bytes.HasPrefix(data, []byte{0x28, 0xb5, 0x2f, 0xfd}):
		return "zstd-compressed data"
	case bytes.HasPrefix(data, []byte{0xfd, '7', 'z', 'X', 'Z', 0}):
		return "xz-compressed data"
	case bytes.HasPrefix(data, []byte{0xfe, 0xff}), bytes.HasPrefix(data, []byte{0xff, 0xfe}), bytes.HasPrefix(data, []byte{0, 0, 0xfe, 0xff}):
		return "" // UTF-16 or UTF-32 with a byte order mark
	case bytes.IndexByte(data[:min(len(data), 8192)], 0) >= 0:
		return "binary data"
	}
	return ""
}

func isTemplate(data []byte) bool {
	return bytes.Contains(data, []byte("{{")) && bytes.Contains(data, []byte("}}"))
}

// objectTypeKey finds an apiVersion or kind key anywhere in a text: at a
// line's start or after an indent, a "- ", a '{' or a ',' (YAML block or
// flow style, JSON), quoted or not.
var objectTypeKey = regexp.MustCompile(`(?m)(?:^|[\s{,\[-])["']?(?:apiVersion|kind)["']?\s*:`)

// namesObjectType reports whether a text shows an apiVersion or kind key,
// as every Kubernetes object has.
func namesObjectType(data []byte) bool {
	return objectTypeKey.Match(data)
}

// notAnObject says why a document is not a Kubernetes object ("" when it
// is one, or is meant to be: a mapping with apiVersion or kind).
func notAnObject(root *yaml.Node) string {
	switch root.Kind {
	case yaml.SequenceNode:
		return "a list, not an object (a JSON patch or data file)"
	case yaml.ScalarNode:
		return "a scalar, not an object"
	case yaml.MappingNode:
		if yamlnode.Value(root, "apiVersion") == nil && yamlnode.Value(root, "kind") == nil {
			return "no apiVersion or kind (not a Kubernetes object)"
		}
	}
	return ""
}

// appendDecoded decodes the object now (every rule needs its content, and
// duplicate keys or alias bombs are input errors) and keeps it if that works.
func appendDecoded(objs []*Object, errs []error, o *Object, docLine int, in interner) ([]*Object, []error) {
	if _, err := o.decode(in); err != nil {
		return objs, append(errs, err)
	}
	o.docLines[0] = docLine
	return append(objs, o), errs
}

func isList(o *Object) bool {
	return strings.HasSuffix(o.Kind, "List") && yamlnode.Value(o.Node(), "items") != nil
}

func expandList(list *Object) ([]*Object, []error) {
	items := yamlnode.Value(list.Node(), "items")
	if items.Kind != yaml.SequenceNode {
		if items.ShortTag() == "!!null" {
			return nil, nil
		}
		return nil, []error{&Error{Pos: Position{File: list.File, Line: items.Line, Column: items.Column}, Msg: fmt.Sprintf("%s.items must be a list of objects", list.Kind)}}
	}
	var objs []*Object
	var errs []error
	for i, it := range items.Content {
		if it.Kind == yaml.ScalarNode && it.ShortTag() == "!!null" {
			continue // a null item: kubectl skips it
		}
		o, err := NewObject(list.File, list.Doc, i, it)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		objs = append(objs, o)
	}
	return objs, errs
}

var yamlLineRE = regexp.MustCompile(`^yaml: (?:line (\d+): )?(.*)$`)

// yamlError turns a YAML parser error into a positioned Error.
func yamlError(file string, err error) error {
	msg := err.Error()
	line := 1
	if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
		if m[1] != "" {
			line, _ = strconv.Atoi(m[1])
		}
		msg = m[2]
	}
	if isParserError(msg) {
		// go-yaml reports parser (not scanner) errors with a 0-based line.
		line++
	}
	if strings.Contains(msg, "found character that cannot start any token") {
		msg += " (tabs cannot indent YAML; use spaces)"
	}
	return &Error{Pos: Position{File: file, Line: line, Column: 1}, Msg: "invalid YAML: " + msg}
}

// parserErrors are the problems go-yaml's parser (as opposed to its scanner) reports.
var parserErrors = []string{
	"did not find expected <document start>", "did not find expected node content",
	"did not find expected key", "did not find expected '-' indicator",
	"did not find expected ',' or ']'", "did not find expected ',' or '}'",
	"did not find expected <stream-start>", "found duplicate %YAML directive",
	"found incompatible YAML document", "found duplicate %TAG directive", "found undefined tag handle",
}

func isParserError(msg string) bool {
	for _, p := range parserErrors {
		if msg == p {
			return true
		}
	}
	return false
}

// SortErrors orders errors by file and position, for stable output.
func SortErrors(errs []error) {
	sort.SliceStable(errs, func(i, j int) bool {
		a, aok := errs[i].(*Error)
		b, bok := errs[j].(*Error)
		if !aok || !bok {
			return aok && !bok
		}
		if a.Pos.File != b.Pos.File {
			return a.Pos.File < b.Pos.File
		}
		return a.Pos.Line < b.Pos.Line
	})
}
