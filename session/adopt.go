package session

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kilnhq/kiln/discover"
	"github.com/kilnhq/kiln/discover/argocd"
	"github.com/kilnhq/kiln/discover/flux"
	"github.com/kilnhq/kiln/discover/gitrev"
	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/report/baseline"
	"github.com/kilnhq/kiln/rules"
)

// shardID is what places an object, or a finding on it, in a shard: the
// object's group, kind, namespace and name (so that the copies of one
// object, which rules relate, are in one shard whatever their version), or
// the file for a finding on no object and an object with no name. The
// objects of a kind Kubernetes does not build in (custom resources) are in
// one shard, their kind's: what is said once per kind (no CRD in the
// input, no policy can match it) is said of the kind's first object and
// so needs all of them.
func shardID(ref manifest.Ref, file string) string {
	if ref.Kind == "" {
		return file
	}
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return file
	}
	if _, ok := builtinKinds().Lookup(gv.WithKind(ref.Kind)); !ok {
		return gv.Group + "/" + ref.Kind
	}
	if ref.Name == "" {
		return file
	}
	return gv.Group + "/" + ref.Kind + "/" + ref.Namespace + "/" + ref.Name
}

// builtinKinds is the table of built-in kinds, read once.
var builtinKinds = sync.OnceValue(manifest.BuiltinKinds)

// shard keeps of a lint what belongs to the run's shard: the findings on
// its objects (the engine judged only those), and of what belongs to a
// file (input errors, skipped files, the file's count, rendered units) that
// of the files whose path hashes to it; every shard of a split holds each
// once, so that kiln report merge adds them up to the whole run's.
func (s *Session) shard(l *Linted, found *discover.Result) {
	sh := s.Settings.Shard
	res := l.Result.Keep(func(f rules.Finding) bool { return sh.Holds(shardID(f.Object, f.Pos.File)) })
	var files []rules.FileObjects
	for _, f := range res.Files {
		if sh.Holds(f.File) {
			files = append(files, f)
		}
	}
	res.Files, res.Summary.Files = files, len(files)
	l.Result = res
	in := &l.Inputs
	var errs []error
	for _, err := range in.Errors {
		var me *manifest.Error
		file := ""
		if errors.As(err, &me) {
			file = me.Pos.File
		}
		if sh.Holds(file) {
			errs = append(errs, err)
		}
	}
	in.Errors = errs
	var skipped []manifest.Skipped
	for _, sk := range in.Skipped {
		if sh.Holds(sk.Pos.File) {
			skipped = append(skipped, sk)
		}
	}
	in.Skipped = skipped
	in.Charts, in.Kustomizations, in.FluxKustomizations, in.ArgoCDApplications = 0, 0, 0, 0
	for _, u := range found.Units {
		if len(u.Source.Errs) > 0 || !sh.Holds(u.Dir) {
			continue
		}
		switch u.Kind {
		case "chart":
			in.Charts++
		case "kustomization":
			in.Kustomizations++
		case flux.UnitKind:
			in.FluxKustomizations++
		case argocd.UnitKind:
			in.ArgoCDApplications++
		}
	}
	in.Shard = sh.String()
}

// compare marks the findings the run's baseline holds: the baseline file
// (--baseline, baseline: in .kiln.yaml), the one --write-baseline writes
// first, and the findings of the tree at --new-from-rev.
func (s *Session) compare(paths []string, found *discover.Result, l *Linted) error {
	set := s.Settings
	if set.Baseline == "" && set.WriteBaseline == "" && set.NewFromRev == "" {
		return nil
	}
	keyer := baseline.Keyer{Plain: plainFiles(found.Files)}
	var b *baseline.Baseline
	var from []string
	switch {
	case set.WriteBaseline != "":
		if set.Shard.On() {
			return errors.New("--write-baseline records the whole run's findings: run it without --shard")
		}
		var err error
		if b, err = baseline.Of(l.Result, keyer); err != nil {
			return err
		}
		if err := b.WriteFile(set.WriteBaseline); err != nil {
			return err
		}
		from = append(from, set.WriteBaseline)
	case set.Baseline != "":
		var err error
		if b, err = baseline.ReadFile(set.Baseline); err != nil {
			return InputErrors{err}
		}
		from = append(from, set.Baseline)
	}
	if set.NewFromRev != "" {
		rev, err := s.revBaseline(paths, set.NewFromRev)
		if err != nil {
			return err
		}
		if b != nil {
			rev.Union(b) // a finding in either is not the change's
		}
		b = rev
		from = append(from, "Git revision "+set.NewFromRev)
	}
	m := b.Matcher(keyer)
	if sh := set.Shard; sh.On() {
		m.Only(func(k baseline.Key) bool { return sh.Holds(shardID(k.Object, k.Source)) })
	}
	if err := l.Result.Baseline(m.Known); err != nil {
		return err
	}
	l.Inputs.Baseline = strings.Join(from, " and ")
	if set.NewFromRev == "" {
		l.Inputs.BaselineFixed = m.Fixed()
	}
	return nil
}

// plainFiles tells the files read as plain manifests.
func plainFiles(files []string) func(string) bool {
	plain := make(map[string]bool, len(files))
	for _, f := range files {
		plain[f] = true
	}
	return func(f string) bool { return plain[f] }
}

// revBaseline is the baseline of the tree at rev: the same paths linted
// the same way in the revision's files, written to a temp directory (and
// removed), with the revision's .kiln.yaml and the settings given now.
func (s *Session) revBaseline(paths []string, rev string) (*baseline.Baseline, error) {
	if len(paths) == 0 {
		paths = []string{"."}
	}
	for _, p := range paths {
		if p == manifest.Stdin {
			return nil, fmt.Errorf("--new-from-rev compares files with their Git revision: it cannot read stdin")
		}
	}
	tree, err := gitrev.Materialize(".", rev)
	if err != nil {
		return nil, err
	}
	defer tree.Remove()
	revPaths := make([]string, len(paths))
	for i, p := range paths {
		if revPaths[i], err = tree.Path(p); err != nil {
			return nil, err
		}
	}
	root, err := tree.Path(".")
	if err != nil {
		return nil, err
	}
	revPaths = existing(revPaths)
	if len(revPaths) == 0 {
		return baseline.New(), nil // nothing linted existed then: every finding is new
	}
	sub, err := New(s.given, revPaths, nil)
	if err != nil {
		return nil, fmt.Errorf("--new-from-rev %s: the revision's settings: %w", rev, err)
	}
	sub.Settings.Baseline, sub.Settings.WriteBaseline, sub.Settings.NewFromRev = "", "", ""
	sub.Settings.NoCache = true // a temp directory's paths never come again
	out, found, err := sub.lint(revPaths, LintOptions{})
	if err != nil {
		return nil, fmt.Errorf("--new-from-rev %s: %w", rev, err)
	}
	defer out.Result.Close()
	return baseline.Of(out.Result, baseline.Keyer{Root: root, Plain: plainFiles(found.Files)})
}

// existing keeps the paths that exist (in a revision, a directory added
// since is not there).
func existing(paths []string) []string {
	var out []string
	for _, p := range paths {
		if _, err := os.Lstat(p); err == nil {
			out = append(out, p)
		}
	}
	return out
}
