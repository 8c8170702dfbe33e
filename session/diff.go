package session

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kilnhq/kiln/discover/gitrev"
	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/report/baseline"
	"github.com/kilnhq/kiln/report/objdiff"
	"github.com/kilnhq/kiln/rules"
)

// DiffOptions are what kiln diff compares.
type DiffOptions struct {
	// Base is the revision compared with; "": the merge base of HEAD and
	// the default branch (gitrev.DefaultBase).
	Base string
}

// Diffed is what kiln diff found.
type Diffed struct {
	Report *objdiff.Report
	// Errs are the input problems of the working tree that the base
	// revision does not have (a unit the change broke): the comparison
	// misses what they hide. Problems both sides share are the tree's, not
	// the change's, and are left out as kiln lint --new-from-rev leaves out
	// its findings.
	Errs []error
}

// Diff is kiln diff: the tree at the base revision and the working tree,
// each read and judged exactly as kiln lint reads and judges it (the one
// input step, the content cache), their objects paired by identity and
// compared field by field, per app: what rendered the object
// (manifest.Object.Via), else the rendered unit, else the directory of its
// file. The revision is read in its own copy with the current directory
// moved to the place of the current one in it, so that both sides name
// their files alike: a batch of objects unchanged since the revision is
// judged once for both sides and every later run (the content cache keys
// on the file names).
func (s *Session) Diff(paths []string, o DiffOptions) (*Diffed, error) {
	if len(paths) == 0 {
		paths = []string{"."}
	}
	for _, p := range paths {
		if p == manifest.Stdin {
			return nil, fmt.Errorf("kiln diff compares files with their Git revision: it cannot read stdin")
		}
	}
	rev := o.Base
	if rev == "" {
		var err error
		if rev, err = gitrev.DefaultBase("."); err != nil {
			return nil, fmt.Errorf("kiln diff: %w", err)
		}
	}
	tree, err := gitrev.MaterializeFor("--base", ".", rev)
	if err != nil {
		return nil, err
	}
	defer tree.Remove()
	base, err := s.diffBase(tree, paths)
	if err != nil {
		return nil, err
	}
	head, err := readSide(s, paths)
	if err != nil {
		return nil, err
	}
	name := rev
	if short := tree.Commit[:min(7, len(tree.Commit))]; rev != tree.Commit {
		name += " (" + short + ")"
	} else {
		name = short
	}
	d := &Diffed{Report: compareSides(base, head)}
	d.Report.Base, d.Report.Head = name, "working tree"
	known := map[string]bool{}
	for _, e := range base.errs {
		known[baseline.Normalize(e.Error())] = true
	}
	for _, e := range head.errs {
		if !known[baseline.Normalize(e.Error())] {
			d.Errs = append(d.Errs, e)
		}
	}
	return d, nil
}

// diffBase reads the revision's side in its tree, from the place of the
// current directory in it, with the revision's .kiln.yaml and the
// settings given now.
func (s *Session) diffBase(tree *gitrev.Tree, paths []string) (*diffSide, error) {
	wd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	cwd, err := tree.Path(".")
	if err != nil {
		return nil, err
	}
	revPaths := make([]string, len(paths))
	for i, p := range paths {
		revPaths[i] = p
		if filepath.IsAbs(p) {
			if revPaths[i], err = tree.Path(p); err != nil {
				return nil, err
			}
		}
	}
	if err := os.MkdirAll(cwd, 0o755); err != nil { // a directory added since
		return nil, err
	}
	if err := os.Chdir(cwd); err != nil {
		return nil, err
	}
	defer os.Chdir(wd)
	revPaths = existing(revPaths)
	if len(revPaths) == 0 {
		return &diffSide{}, nil // nothing compared existed then: every object is new
	}
	sub, err := New(s.given, revPaths, nil)
	if err != nil {
		return nil, fmt.Errorf("--base %s: the revision's settings: %w", tree.Rev, err)
	}
	// The same content cache as the working tree's, a relative --cache-dir
	// named from where the user is.
	sub.Settings.NoCache, sub.Settings.CacheDir = s.Settings.NoCache, s.Settings.CacheDir
	if dir := sub.Settings.CacheDir; dir != "" && !filepath.IsAbs(dir) {
		sub.Settings.CacheDir = filepath.Join(wd, dir)
	}
	side, err := readSide(sub, revPaths)
	if err != nil {
		return nil, fmt.Errorf("--base %s: %w", tree.Rev, err)
	}
	return side, nil
}

// diffSide is one side of a diff: every object as read, before admission
// (its content in canonical JSON), and the keys of its findings.
type diffSide struct {
	objs []sideObject
	// findings are the keys of the unsuppressed findings on each object
	// identity, counted.
	findings map[identity]map[baseline.Key]int
	severity map[baseline.Key]rules.Severity
	errs     []error
}

// identity is what makes two definitions one object for kiln diff: the
// API group (not the version), kind, namespace and name.
type identity struct{ group, kind, namespace, name string }

func identityOf(r manifest.Ref) identity {
	gv, _ := schema.ParseGroupVersion(r.APIVersion)
	return identity{gv.Group, r.Kind, r.Namespace, r.Name}
}

type sideObject struct {
	id  identity
	ref manifest.Ref
	// app is the app that deploys the object (appOf), unit its rendered
	// unit (manifest.Object.Unit), "" for a plain file's object.
	app, unit string
	content   []byte
}

// readSide reads and judges the paths with the settings of sess, as kiln
// lint does, through the content cache.
func readSide(sess *Session, paths []string) (*diffSide, error) {
	sess.Settings.Baseline, sess.Settings.WriteBaseline, sess.Settings.NewFromRev = "", "", ""
	c, err := sess.cache()
	if err != nil {
		return nil, err
	}
	// Rendered through the content cache: what the other side or an
	// earlier run rendered from the same files is restored, not rendered.
	found := sess.discover(paths, readOptions{cache: renderCache(c)})
	in, err := sess.readFound(found, readOptions{})
	if err != nil {
		return nil, err
	}
	units := map[string]string{}
	for _, u := range found.Units {
		units[u.Dir] = u.Kind + " " + filepath.ToSlash(u.Dir)
	}
	side := &diffSide{findings: map[identity]map[baseline.Key]int{}, severity: map[baseline.Key]rules.Severity{}}
	for _, o := range in.x.All {
		c, err := o.Content()
		if err != nil {
			continue // an input error, which lint reports
		}
		data, err := json.Marshal(c) // map keys sorted: canonical
		if err != nil {
			return nil, err
		}
		ref := o.Ref()
		app, unit := appOf(o, units)
		side.objs = append(side.objs, sideObject{id: identityOf(ref), ref: ref, app: app, unit: unit, content: data})
	}
	l, _, err := sess.lint(paths, LintOptions{})
	if err != nil {
		return nil, err
	}
	defer l.Result.Close()
	keyer := baseline.Keyer{Plain: plainFiles(found.Files)}
	err = l.Result.Each(func(f rules.Finding) error {
		if f.Suppressed != nil || f.Object.Kind == "" {
			return nil
		}
		id := identityOf(f.Object)
		k := keyer.Of(f)
		k.Source = "" // where the object's definition is does not make its findings differ
		if side.findings[id] == nil {
			side.findings[id] = map[baseline.Key]int{}
		}
		side.findings[id][k]++
		side.severity[k] = max(side.severity[k], f.Severity)
		return nil
	})
	side.errs = l.Inputs.Errors
	return side, err
}

// appOf names the app that deploys an object: what rendered it, else its
// rendered unit, else the directory of its file; and the object's unit.
func appOf(o *manifest.Object, units map[string]string) (app, unit string) {
	unit = filepath.ToSlash(o.Unit)
	switch {
	case o.Via != "":
		return o.Via, unit
	case o.Unit != "":
		if name, ok := units[o.Unit]; ok {
			return name, unit
		}
		return unit, unit
	}
	return "folder " + filepath.ToSlash(filepath.Dir(o.File)), ""
}

// disambiguate names the app of each object by its unit too where one
// app name stands for objects of several units on the sides (a Flux
// Kustomization of one name in each cluster's folder): "HelmRelease
// podinfo/podinfo in Kustomization flux-system/apps
// (clusters/production/apps.yaml:2)". A unit named after its parent and
// "#" (a release's, discover.Unit.Dir) is named by its parent.
func disambiguate(sides ...*diffSide) {
	units := map[string]map[string]bool{}
	for _, side := range sides {
		for _, o := range side.objs {
			if units[o.app] == nil {
				units[o.app] = map[string]bool{}
			}
			units[o.app][o.unit] = true
		}
	}
	for _, side := range sides {
		for i := range side.objs {
			o := &side.objs[i]
			if len(units[o.app]) < 2 || o.unit == "" {
				continue
			}
			parent, _, _ := strings.Cut(o.unit, "#")
			if strings.HasPrefix(parent, o.app) {
				o.app = parent
			} else {
				o.app += " in " + parent
			}
		}
	}
}

// compareSides pairs the sides' objects by identity (copies of one
// identity by app first, then in order) and reports what differs.
func compareSides(base, head *diffSide) *objdiff.Report {
	disambiguate(base, head)
	b := &reportBuilder{apps: map[string]*objdiff.App{}, first: map[identity]appPlace{}}
	b.masker = secretMasker(base, head)
	baseIDs, headIDs := indexByIdentity(base.objs), indexByIdentity(head.objs)
	for _, id := range identities(base, head, baseIDs, headIDs) {
		bs, hs := baseIDs[id], headIDs[id]
		b.addObjects(id, base, head, bs, hs)
		introduced, fixed := findingsDiff(base, head, id)
		if len(introduced)+len(fixed) == 0 {
			continue
		}
		obj := b.findingsEntry(id, base, head, bs, hs)
		obj.Introduced, obj.Fixed = introduced, fixed
	}
	r := &objdiff.Report{}
	for _, a := range b.apps {
		r.Apps = append(r.Apps, *a)
	}
	r.Sort()
	return r
}

// decodeContent decodes an object's JSON content (nil when it is not an
// object).
func decodeContent(data []byte) map[string]any {
	var c map[string]any
	json.Unmarshal(data, &c)
	return c
}

// secretMasker learns the values of every Secret on both sides, so that no
// diff shows one.
func secretMasker(base, head *diffSide) objdiff.Masker {
	var masker objdiff.Masker
	for _, side := range []*diffSide{base, head} {
		for _, o := range side.objs {
			if objdiff.IsSecret(o.ref.APIVersion, o.ref.Kind) {
				masker.Learn(decodeContent(o.content))
			}
		}
	}
	return masker
}

// indexByIdentity maps each identity to the indexes of its objects.
func indexByIdentity(objs []sideObject) map[identity][]int {
	m := map[identity][]int{}
	for i, o := range objs {
		m[o.id] = append(m[o.id], i)
	}
	return m
}

// identities lists, sorted and once each, the identities of the objects of
// both sides and of the findings on objects neither side holds.
func identities(base, head *diffSide, baseIDs, headIDs map[identity][]int) []identity {
	var ids []identity
	for id := range baseIDs {
		ids = append(ids, id)
	}
	for id := range headIDs {
		if _, ok := baseIDs[id]; !ok {
			ids = append(ids, id)
		}
	}
	for _, side := range []*diffSide{base, head} {
		for id := range side.findings {
			_, inBase := baseIDs[id]
			_, inHead := headIDs[id]
			if !inBase && !inHead {
				ids = append(ids, id)
			}
		}
	}
	sort.Slice(ids, func(i, j int) bool { return fmt.Sprint(ids[i]) < fmt.Sprint(ids[j]) })
	return compactIDs(ids)
}

// appPlace is where an entry sits: its app and its index in the app's objects.
type appPlace struct {
	app string
	i   int
}

// reportBuilder collects the entries of a diff by app.
type reportBuilder struct {
	masker objdiff.Masker
	apps   map[string]*objdiff.App
	// first is the first entry of each identity, which carries its findings.
	first map[identity]appPlace
}

// add appends obj to app's entries.
func (b *reportBuilder) add(app string, id identity, obj objdiff.Object) {
	a := b.apps[app]
	if a == nil {
		a = &objdiff.App{Name: app}
		b.apps[app] = a
	}
	a.Objects = append(a.Objects, obj)
	if _, ok := b.first[id]; !ok {
		b.first[id] = appPlace{app, len(a.Objects) - 1}
	}
}

// entryOf is the entry naming o.
func entryOf(o sideObject, op objdiff.Op) objdiff.Object {
	return objdiff.Object{APIVersion: o.ref.APIVersion, Kind: o.ref.Kind, Namespace: o.ref.Namespace, Name: o.ref.Name, Op: op}
}

// addObjects adds the entries of one identity's copies (bs on the base
// side, hs on the head side): each pair that changed, with its fields, and
// the copies removed and added.
func (b *reportBuilder) addObjects(id identity, base, head *diffSide, bs, hs []int) {
	pairs, removed, added := pairCopies(bs, hs, base.objs, head.objs)
	for _, p := range pairs {
		bo, ho := base.objs[p[0]], head.objs[p[1]]
		if bytes.Equal(bo.content, ho.content) {
			continue
		}
		changes := objdiff.Fields(b.masker.Mask(bo.ref.APIVersion, bo.ref.Kind, decodeContent(bo.content)), b.masker.Mask(ho.ref.APIVersion, ho.ref.Kind, decodeContent(ho.content)))
		if len(changes) == 0 {
			continue
		}
		obj := entryOf(ho, objdiff.Changed)
		obj.Changes = changes
		b.add(ho.app, id, obj)
	}
	for _, i := range removed {
		b.add(base.objs[i].app, id, entryOf(base.objs[i], objdiff.Removed))
	}
	for _, i := range added {
		b.add(head.objs[i].app, id, entryOf(head.objs[i], objdiff.Added))
	}
}

// findingsEntry returns the entry that carries id's findings: its first
// entry, else a new unchanged one for its object (the head's copy, else the
// base's, else one naming an object neither side holds).
func (b *reportBuilder) findingsEntry(id identity, base, head *diffSide, bs, hs []int) *objdiff.Object {
	at, ok := b.first[id]
	if !ok {
		var o sideObject
		switch {
		case len(hs) > 0:
			o = head.objs[hs[0]]
		case len(bs) > 0:
			o = base.objs[bs[0]]
		default:
			o = sideObject{app: "findings on objects not in the input", ref: manifest.Ref{Kind: id.kind, Namespace: id.namespace, Name: id.name, APIVersion: id.group}}
		}
		b.add(o.app, id, entryOf(o, objdiff.Unchanged))
		at = b.first[id]
	}
	return &b.apps[at.app].Objects[at.i]
}

func compactIDs(ids []identity) []identity {
	out := ids[:0]
	for i, id := range ids {
		if i == 0 || id != ids[i-1] {
			out = append(out, id)
		}
	}
	return out
}

// pairCopies pairs the copies of one identity on the two sides: those of
// one app first, then the rest in order; what is left was removed or
// added.
func pairCopies(bs, hs []int, base, head []sideObject) (pairs [][2]int, removed, added []int) {
	usedH := make([]bool, len(hs))
	var restB []int
	for _, b := range bs {
		paired := false
		for j, h := range hs {
			if !usedH[j] && base[b].app == head[h].app {
				pairs, usedH[j], paired = append(pairs, [2]int{b, h}), true, true
				break
			}
		}
		if !paired {
			restB = append(restB, b)
		}
	}
	var restH []int
	for j, h := range hs {
		if !usedH[j] {
			restH = append(restH, h)
		}
	}
	for len(restB) > 0 && len(restH) > 0 {
		pairs = append(pairs, [2]int{restB[0], restH[0]})
		restB, restH = restB[1:], restH[1:]
	}
	return pairs, restB, restH
}

// findingsDiff are the findings on an identity the working tree has and
// the base has not (introduced), and the other way (fixed), sorted.
func findingsDiff(base, head *diffSide, id identity) (introduced, fixed []objdiff.Finding) {
	minus := func(a, b map[baseline.Key]int, sev map[baseline.Key]rules.Severity) []objdiff.Finding {
		var out []objdiff.Finding
		for k, n := range a {
			for range n - b[k] {
				out = append(out, objdiff.Finding{Rule: k.Rule, Severity: sev[k].String(), Field: k.Field, Message: k.Message})
			}
		}
		sort.Slice(out, func(i, j int) bool {
			x, y := out[i], out[j]
			if x.Rule != y.Rule {
				return x.Rule < y.Rule
			}
			if x.Field != y.Field {
				return x.Field < y.Field
			}
			return x.Message < y.Message
		})
		return out
	}
	return minus(head.findings[id], base.findings[id], head.severity), minus(base.findings[id], head.findings[id], base.severity)
}

// DiffVerdict is the outcome of kiln diff: InputErrors for input problems
// the change brought, ErrFindings (exit 1) when the sides differ, else nil.
func (s *Session) DiffVerdict(d *Diffed) error {
	if err := inputErrors(d.Errs); err != nil {
		return err
	}
	if !d.Report.Empty() {
		return ErrFindings
	}
	return nil
}
