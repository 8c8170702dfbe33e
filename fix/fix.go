// Package fix rewrites manifests so that the findings kiln can repair
// automatically go away: the restricted Pod Security securityContext
// (psa/runAsNonRoot, psa/seccompProfile_*, psa/allowPrivilegeEscalation,
// psa/capabilities_*), classic helper sidecars in run-to-completion
// pods (sidecar/classic-in-job) and removed apiVersions whose replacement has
// the same schema (api/removed).
//
// Fixes follow the linter's findings, so namespace levels, kiln.dev/ignore
// annotations and the config decide what is fixed exactly as they decide
// what is reported. Edits are made on the objects' YAML nodes and written
// back as text patches of the changed nodes only (see patch.go): comments,
// key order, quoting and untouched documents keep their bytes.
package fix

import (
	"os"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Rule IDs that kiln fix repairs.
const (
	RunAsNonRoot          = "psa/runAsNonRoot"
	SeccompRestricted     = "psa/seccompProfile_restricted"
	SeccompBaseline       = "psa/seccompProfile_baseline"
	AllowPrivEscalation   = "psa/allowPrivilegeEscalation"
	CapabilitiesRestrict  = "psa/capabilities_restricted"
	CapabilitiesBaseline  = "psa/capabilities_baseline"
	SidecarClassicInJob   = "sidecar/classic-in-job"
	APIRemoved            = "api/removed"
	sidecarContainersPath = "containers["
)

// podFixers repair one Pod Security check on a pod spec.
var podFixers = map[string]func(spec *yaml.Node) []string{
	RunAsNonRoot:         fixRunAsNonRoot,
	SeccompRestricted:    func(s *yaml.Node) []string { return fixSeccomp(s, true) },
	SeccompBaseline:      func(s *yaml.Node) []string { return fixSeccomp(s, false) },
	AllowPrivEscalation:  fixPrivilegeEscalation,
	CapabilitiesRestrict: fixCapabilities,
	CapabilitiesBaseline: fixCapabilitiesBaseline,
}

// Rules lists the rule IDs kiln fix repairs, sorted.
func Rules() []string {
	out := []string{SidecarClassicInJob, APIRemoved}
	for id := range podFixers {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

// Fixable reports whether kiln fix repairs findings of a rule (in some cases:
// a fixer may still decline, e.g. an apiVersion whose replacement changes the schema).
func Fixable(rule string) bool {
	_, ok := podFixers[rule]
	return ok || rule == SidecarClassicInJob || rule == APIRemoved
}

// MatchRule reports whether a rule ID matches a --rule pattern: an ID, or a
// path.Match glob such as "psa/*".
func MatchRule(pattern, rule string) bool {
	if pattern == rule {
		return true
	}
	ok, err := path.Match(pattern, rule)
	return err == nil && ok
}

// Options say what to fix.
type Options struct {
	// KubeVersion is the target (native sidecars need 1.29, replacements have a first release).
	KubeVersion manifest.KubeVersion
	// Only limits the fixes to rules matching one of these patterns (see MatchRule); empty means all.
	Only []string
	// RunAsUser, when above 0, is the user ID set on pods that get
	// runAsNonRoot: true and name no user: with it the kubelet need not trust
	// the image's USER.
	RunAsUser int64
}

func (o Options) wants(rule string) bool {
	if len(o.Only) == 0 {
		return true
	}
	for _, p := range o.Only {
		if MatchRule(p, rule) {
			return true
		}
	}
	return false
}

// File is one input file: its bytes and the objects parsed from them.
type File struct {
	Path    string
	Src     []byte
	Mode    os.FileMode
	Objects []*manifest.Object
	// Errs are parse problems; a file with any is never rewritten.
	Errs []error
}

// ReadFile reads and parses one file.
func ReadFile(p string) *File {
	f := &File{Path: p}
	fi, err := os.Stat(p)
	if err == nil && fi.Size() > manifest.MaxFileSize {
		f.Errs = manifest.ReadFile(p, nil).Errs // the reader's size error
		return f
	}
	data, err := os.ReadFile(p)
	if err != nil {
		f.Errs = []error{&manifest.Error{Pos: manifest.Position{File: p}, Msg: "cannot read: " + err.Error()}}
		return f
	}
	f.Mode = fi.Mode().Perm()
	f.Src = data
	f.Objects, f.Errs = manifest.Parse(p, data)
	return f
}

// Change is one repair made to an object.
type Change struct {
	Pos     manifest.Position
	Object  manifest.Ref
	Rule    string
	Message string
}

// Result is what fixing one file did.
type Result struct {
	File    *File
	Changes []Change
	// Output is the new content; equal to File.Src when nothing changed.
	Output []byte
	// Reformatted lists documents (0-based) that could not be patched line
	// by line and were re-encoded whole.
	Reformatted []int
	// Err is set when the file could not be rewritten; it is left unchanged.
	Err error
	// Skipped says why a file with fixable findings was not fixed (a JSON file).
	Skipped string
	// Cautions are changes, one per object and concern, that can stop a pod
	// from starting (runAsNonRoot on an image whose user kiln cannot know).
	Cautions []Change
}

// Changed reports whether the file's content changes.
func (r *Result) Changed() bool { return r.Err == nil && string(r.Output) != string(r.File.Src) }

// Fix repairs the findings it can on the files' objects and computes each
// file's new content. Files with parse errors and JSON files are left as they are.
func Fix(files []*File, findings []rules.Finding, opts Options) []*Result {
	type key struct {
		file string
		ref  manifest.Ref
	}
	byObj := map[key][]rules.Finding{}
	for _, f := range findings {
		if f.Suppressed != nil || !Fixable(f.Rule) || !opts.wants(f.Rule) {
			continue
		}
		k := key{f.Pos.File, f.Object}
		byObj[k] = append(byObj[k], f)
	}
	var out []*Result
	for _, file := range files {
		res := &Result{File: file, Output: file.Src}
		out = append(out, res)
		if len(file.Errs) > 0 {
			continue
		}
		if strings.EqualFold(path.Ext(file.Path), ".json") {
			for _, o := range file.Objects {
				if len(byObj[key{o.File, o.Ref()}]) > 0 {
					res.Skipped = "kiln fix does not rewrite JSON files; its fixable findings stay"
					break
				}
			}
			continue
		}
		changed := map[int]*yaml.Node{}
		lists := map[int]map[int]*yaml.Node{}
		for _, o := range file.Objects {
			fs := byObj[key{o.File, o.Ref()}]
			if len(fs) == 0 {
				continue
			}
			notes := fixObject(o, fs, opts)
			if len(notes) == 0 {
				continue
			}
			for _, n := range notes {
				c := Change{Pos: o.Pos(), Object: o.Ref(), Rule: n.rule, Message: n.msg}
				if n.caution {
					res.Cautions = append(res.Cautions, c)
					continue
				}
				res.Changes = append(res.Changes, c)
			}
			if o.Item >= 0 {
				if lists[o.Doc] == nil {
					lists[o.Doc] = map[int]*yaml.Node{}
				}
				lists[o.Doc][o.Item] = o.Node()
			} else {
				changed[o.Doc] = o.Node()
			}
		}
		if len(changed)+len(lists) == 0 {
			continue
		}
		if len(lists) > 0 {
			roots, err := decodeRoots(file.Src)
			if err != nil {
				res.Err = err
				continue
			}
			for d, items := range lists {
				changed[d] = withItems(roots[d], items)
			}
		}
		output, reformatted, err := rewrite(file.Path, file.Src, changed)
		if err != nil {
			res.Err = err
			res.Changes = nil
			continue
		}
		res.Output, res.Reformatted = output, reformatted
	}
	return out
}

// withItems copies a List document's root with some items replaced.
func withItems(root *yaml.Node, items map[int]*yaml.Node) *yaml.Node {
	cp := *root
	cp.Content = append([]*yaml.Node(nil), root.Content...)
	for i := 0; i+1 < len(cp.Content); i += 2 {
		if cp.Content[i].Value != "items" {
			continue
		}
		seq := *cp.Content[i+1]
		seq.Content = append([]*yaml.Node(nil), seq.Content...)
		for idx, n := range items {
			if idx < len(seq.Content) {
				seq.Content[idx] = n
			}
		}
		cp.Content[i+1] = &seq
	}
	return &cp
}

// note is one change made to an object, or (caution) a warning about one.
type note struct {
	rule, msg string
	caution   bool
}

// fixObject applies the fixers for an object's findings to its nodes.
func fixObject(o *manifest.Object, fs []rules.Finding, opts Options) []note {
	var notes []note
	done := map[string]bool{}
	sidecars := map[string][]int{} // template path → container indexes
	for _, f := range fs {
		switch {
		case f.Rule == APIRemoved:
			if done[f.Rule] {
				continue
			}
			done[f.Rule] = true
			to := apiReplacement(o.APIVersion, o.Kind, opts.KubeVersion)
			if to == "" {
				continue
			}
			setScalar(o.Node(), "apiVersion", str(to))
			notes = append(notes, note{rule: f.Rule, msg: "apiVersion " + o.APIVersion + " → " + to})
		case f.Rule == SidecarClassicInJob:
			if opts.KubeVersion.Less(manifest.KubeVersion{Major: 1, Minor: nativeSidecarMinor}) {
				continue
			}
			for _, t := range templatesFor(o, f.Field) {
				rest := strings.TrimPrefix(f.Field, t.SpecPath()+".")
				if !strings.HasPrefix(rest, sidecarContainersPath) || !strings.HasSuffix(rest, "]") {
					continue
				}
				i, err := strconv.Atoi(rest[len(sidecarContainersPath) : len(rest)-1])
				if err == nil {
					sidecars[t.Path] = append(sidecars[t.Path], i)
				}
			}
		default:
			fixer := podFixers[f.Rule]
			if fixer == nil {
				continue
			}
			for _, t := range templatesFor(o, f.Field) {
				if done[f.Rule+"\x00"+t.Path] {
					continue
				}
				done[f.Rule+"\x00"+t.Path] = true
				spec := o.Lookup(t.SpecPath())
				if spec == nil || spec.Kind != yaml.MappingNode || hasMergeKey(spec) {
					continue
				}
				if f.Rule == RunAsNonRoot {
					changes, caution := fixRunAsNonRootAs(spec, opts.RunAsUser)
					for _, m := range changes {
						notes = append(notes, note{rule: f.Rule, msg: prefix(t) + m})
					}
					if caution != "" {
						notes = append(notes, note{rule: f.Rule, msg: prefix(t) + caution, caution: true})
					}
					continue
				}
				for _, m := range fixer(spec) {
					notes = append(notes, note{rule: f.Rule, msg: prefix(t) + m})
				}
			}
		}
	}
	paths := make([]string, 0, len(sidecars))
	for p := range sidecars {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		t := manifest.PodTemplate{Path: p}
		for _, tt := range manifest.PodTemplatesOf(o) {
			if tt.Path == p {
				t = tt
			}
		}
		spec := o.Lookup(t.SpecPath())
		if spec == nil || spec.Kind != yaml.MappingNode || hasMergeKey(spec) {
			continue
		}
		for _, m := range moveToNativeSidecars(spec, sidecars[p]) {
			notes = append(notes, note{rule: SidecarClassicInJob, msg: prefix(t) + m})
		}
	}
	return notes
}

func prefix(t manifest.PodTemplate) string {
	if t.Name == "" {
		return ""
	}
	return "replicated job " + strconv.Quote(t.Name) + ": "
}

// templatesFor returns the pod templates of o that a finding's field lies in
// (all of them for an empty field).
func templatesFor(o *manifest.Object, field string) []manifest.PodTemplate {
	var out []manifest.PodTemplate
	for _, t := range manifest.PodTemplatesOf(o) {
		if field == "" || t.Path == "" || field == t.Path || strings.HasPrefix(field, t.Path+".") {
			out = append(out, t)
		}
	}
	return out
}

// hasMergeKey reports whether a "<<" merge key appears anywhere under n. A
// key set next to a merge would hide the merged mapping's value for that key
// (e.g. a securityContext inherited from an anchor), so such pod specs are
// left to a person.
func hasMergeKey(n *yaml.Node) bool {
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == "<<" && n.Content[i].Style&(yaml.SingleQuotedStyle|yaml.DoubleQuotedStyle) == 0 {
				return true
			}
		}
	}
	for _, c := range n.Content {
		if hasMergeKey(c) {
			return true
		}
	}
	return false
}
