package lint

import (
	"sort"
	"strings"

	"github.com/kilnhq/kiln/admit/catalog"
	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules"
)

// CatalogFile is the file name the catalog's CRDs are read under in a run
// ("catalog:" then project@version): no finding is ever reported there,
// since those CRDs are context only.
const CatalogFile = "catalog:"

// gk is an API group and kind.
type gk struct{ group, kind string }

// addCRDs joins to the context the CRDs that define the input's custom
// resources which no CRD in the input defines: first those of the crds:
// setting, then the catalog's (unless it is off), so that the input's own
// CRDs win over the user's, and both over the catalog. Only the kinds the
// input uses are looked up, so a run without custom resources reads
// nothing of the catalog. It returns the catalog entries used, sorted.
func (f *firstPass) addCRDs(in Input, stdin *manifest.Source, opts *rules.Options) []string {
	if opts == nil {
		return nil
	}
	used := f.customKinds(in, stdin)
	if len(used) == 0 {
		return nil
	}
	// The kinds no CRD of the input defines that crds: or the catalog may:
	// not the built-in groups' (the catalog holds none of them).
	var builtin map[string]bool
	if len(opts.CRDs) > 0 {
		builtin = builtinGroups()
	}
	missing := f.undefinedKinds(used, builtin)
	if len(missing) == 0 {
		return nil
	}
	// The crds: setting: only its CRDs of the kinds missing join.
	if len(opts.CRDs) > 0 {
		missing = f.addSettingCRDs(opts.CRDs, missing)
	}
	if opts.CatalogOff {
		return nil
	}
	return f.addCatalogCRDs(missing, opts.CatalogVersions)
}

// undefinedKinds returns the kinds of used that no CRD of the input
// defines and that crds: or the catalog may: those of a group the catalog
// holds and, when builtin is not nil (the crds: setting is given), those
// of any group not in builtin.
func (f *firstPass) undefinedKinds(used []gk, builtin map[string]bool) []gk {
	defined := map[gk]bool{}
	for _, o := range f.context {
		if g, k, ok := crdDefines(o); ok {
			defined[gk{g, k}] = true
		}
	}
	var missing []gk
	for _, u := range used {
		if defined[u] {
			continue
		}
		if catalog.HasGroup(u.group) || builtin != nil && !builtin[u.group] {
			missing = append(missing, u)
		}
	}
	return missing
}

// builtinGroups are the API groups of the built-in kinds, but for those
// the catalog holds: kiln's own compiled kinds (JobSet) are in the catalog
// too.
func builtinGroups() map[string]bool {
	builtin := map[string]bool{}
	for _, r := range manifest.BuiltinKinds().All() {
		if !catalog.HasGroup(r.GVK.Group) {
			builtin[r.GVK.Group] = true
		}
	}
	return builtin
}

// addSettingCRDs joins to the context the CRDs of the crds: setting's
// files (paths or globs) that define a kind of missing, the first of each
// kind, and returns the kinds still missing. What cannot be read is an
// input error, as the App specs' are.
func (f *firstPass) addSettingCRDs(paths []string, missing []gk) []gk {
	files, errs := manifest.Expand(paths)
	f.specErrs = append(f.specErrs, errs...)
	byGK := map[gk]*manifest.Object{}
	for _, file := range files {
		src := manifest.ReadFile(file, nil)
		f.specErrs = append(f.specErrs, src.Errs...)
		for _, o := range src.Objects {
			if g, k, ok := crdDefines(o); ok && byGK[gk{g, k}] == nil {
				byGK[gk{g, k}] = o
			}
		}
	}
	rest := missing[:0:0]
	for _, m := range missing {
		if o := byGK[m]; o != nil {
			f.context = append(f.context, o)
			delete(byGK, m) // one CRD defines one kind
			continue
		}
		rest = append(rest, m)
	}
	return rest
}

// addCatalogCRDs joins to the context the catalog's CRD of each kind of
// missing it has (at the versions pinned), loading the catalog at the
// first, and returns the catalog entries used, sorted. A catalog that
// cannot be loaded or a CRD that cannot be read is an input error.
func (f *firstPass) addCatalogCRDs(missing []gk, versions map[string]string) []string {
	var ix *catalog.Index
	entries := map[string]bool{}
	for _, m := range missing {
		if !catalog.HasGroup(m.group) {
			continue
		}
		if ix == nil {
			var err error
			if ix, err = catalog.Load(); err != nil {
				f.specErrs = append(f.specErrs, &manifest.Error{Pos: manifest.Position{File: CatalogFile}, Msg: err.Error()})
				return nil
			}
		}
		c, ok := ix.Choose(m.group, m.kind, versions)
		if !ok {
			continue
		}
		content, err := c.Content()
		if err != nil {
			f.specErrs = append(f.specErrs, &manifest.Error{Pos: manifest.Position{File: CatalogFile}, Msg: err.Error()})
			continue
		}
		o := &manifest.Object{File: CatalogFile + c.Entry.Project + "@" + c.Entry.Version, Item: -1,
			APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition", Name: c.Name()}
		o.SetContent(content)
		f.context = append(f.context, o)
		entries[c.Entry.String()] = true
	}
	out := make([]string, 0, len(entries))
	for e := range entries {
		out = append(out, e)
	}
	sort.Strings(out)
	return out
}

// customKinds returns the kinds of the linted input (files, stdin, rendered
// units, compiled App specs) in a non-empty API group, sorted.
func (f *firstPass) customKinds(in Input, stdin *manifest.Source) []gk {
	seen := map[gk]bool{}
	add := func(group, kind string) {
		if group != "" && kind != "" {
			seen[gk{group, kind}] = true
		}
	}
	for i, ks := range f.kinds {
		if i >= len(in.Files) {
			break // context files (--repo-context) are not judged
		}
		for k := range ks {
			group, kind, _ := strings.Cut(k, "/")
			add(group, kind)
		}
	}
	var objs []*manifest.Object
	if stdin != nil {
		objs = append(objs, stdin.Objects...)
	}
	for _, u := range in.Units {
		objs = append(objs, u.Source.Objects...)
	}
	for _, compiled := range f.specs {
		objs = append(objs, compiled...)
	}
	for _, o := range objs {
		add(o.Group(), o.Kind)
	}
	out := make([]gk, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].group != out[j].group {
			return out[i].group < out[j].group
		}
		return out[i].kind < out[j].kind
	})
	return out
}

// crdDefines returns the group and kind a CustomResourceDefinition
// defines.
func crdDefines(o *manifest.Object) (string, string, bool) {
	if o.Kind != "CustomResourceDefinition" || o.Group() != "apiextensions.k8s.io" {
		return "", "", false
	}
	c, err := o.Content()
	if err != nil {
		return "", "", false
	}
	spec, _ := c["spec"].(map[string]any)
	names, _ := spec["names"].(map[string]any)
	group, _ := spec["group"].(string)
	kind, _ := names["kind"].(string)
	if group == "" || kind == "" {
		return "", "", false
	}
	return group, kind, true
}
