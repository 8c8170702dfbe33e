// Package fix rewrites manifests so that the findings kiln can repair
// automatically go away. The checkers decide what can be repaired and
// attach the repair to the finding (rules.Fix, as go/analysis attaches
// SuggestedFixes): the restricted Pod Security securityContext (psa), native
// sidecars for helpers in run-to-completion pods (the
// sidecar/classic-in-job policy) and removed apiVersions whose replacement
// has the same schema (api/removed). This package applies them.
//
// Fixes follow the linter's findings, so namespace levels, kiln.dev/ignore
// annotations and the config decide what is fixed exactly as they decide
// what is reported. Edits are made on the objects' YAML nodes and written
// back as text patches of the changed nodes only (see patch.go): comments,
// key order, quoting and untouched documents keep their bytes.
package fix

import (
	"maps"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// podFixers make one securityContext repair on a pod spec.
var podFixers = map[rules.FixAction]func(spec *yaml.Node) []string{
	rules.FixRunAsNonRoot:           fixRunAsNonRoot,
	rules.FixSeccompRestricted:      func(s *yaml.Node) []string { return fixSeccomp(s, true) },
	rules.FixSeccompBaseline:        func(s *yaml.Node) []string { return fixSeccomp(s, false) },
	rules.FixNoPrivilegeEscalation:  fixPrivilegeEscalation,
	rules.FixCapabilitiesRestricted: fixCapabilities,
	rules.FixCapabilitiesBaseline:   fixCapabilitiesBaseline,
}

// Options say what to fix.
type Options struct {
	// Only limits the fixes to rules matching one of these patterns (see rules.MatchRule); empty means all.
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
		if rules.MatchRule(p, rule) {
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

// Fix makes the repairs the findings carry (Finding.Fix) on the files'
// objects and computes each file's new content. Files with parse errors and JSON files are left as they are.
func Fix(files []*File, findings []rules.Finding, opts Options) []*Result {
	type key struct {
		file string
		ref  manifest.Ref
	}
	byObj := map[key][]rules.Finding{}
	for _, f := range findings {
		if f.Suppressed != nil || f.Fix == nil || !opts.wants(f.Rule) {
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

// fixObject makes the repairs an object's findings carry on its nodes.
func fixObject(o *manifest.Object, fs []rules.Finding, opts Options) []note {
	var notes []note
	done := map[rules.Fix]bool{}
	sidecars := map[string][]int{} // template path → container indexes
	sidecarRule := map[string]string{}
	for _, f := range fs {
		fx := *f.Fix
		if fx.Action != rules.FixNativeSidecar {
			if done[fx] {
				continue
			}
			done[fx] = true
		}
		switch fx.Action {
		case rules.FixAPIVersion:
			from := o.APIVersion
			setScalar(o.Node(), "apiVersion", str(fx.APIVersion))
			notes = append(notes, note{rule: f.Rule, msg: "apiVersion " + from + " → " + fx.APIVersion})
		case rules.FixNativeSidecar:
			sidecars[fx.Template] = append(sidecars[fx.Template], fx.Container)
			sidecarRule[fx.Template] = f.Rule
		default:
			fixer := podFixers[fx.Action]
			t, spec := templateSpec(o, fx.Template)
			if fixer == nil || spec == nil {
				continue
			}
			if fx.Action == rules.FixRunAsNonRoot {
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
	for _, p := range slices.Sorted(maps.Keys(sidecars)) {
		t, spec := templateSpec(o, p)
		if spec == nil {
			continue
		}
		for _, m := range moveToNativeSidecars(spec, sidecars[p]) {
			notes = append(notes, note{rule: sidecarRule[p], msg: prefix(t) + m})
		}
	}
	return notes
}

// templateSpec is the pod template of o at path and its pod spec, nil
// when the spec is not a mapping kiln can edit (merge keys are left to a
// person).
func templateSpec(o *manifest.Object, path string) (manifest.PodTemplate, *yaml.Node) {
	t := manifest.PodTemplate{Path: path}
	for _, tt := range manifest.PodTemplatesOf(o) {
		if tt.Path == path {
			t = tt
		}
	}
	spec := o.Lookup(t.SpecPath())
	if spec == nil || spec.Kind != yaml.MappingNode || hasMergeKey(spec) {
		return t, nil
	}
	return t, spec
}

func prefix(t manifest.PodTemplate) string {
	if t.Name == "" {
		return ""
	}
	return "replicated job " + strconv.Quote(t.Name) + ": "
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
