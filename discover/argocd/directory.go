package argocd

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/kilnhq/kiln/discover"
	"github.com/kilnhq/kiln/internal/pathkey"
	"github.com/kilnhq/kiln/manifest"
)

// renderDirectory reads a directory of manifests as the repo-server
// does: its *.yaml, *.yml and *.json files (below it too with recurse),
// those include matches and exclude does not (globs on the path from the
// directory, `*` crossing folders, {a,b} alternatives); *.jsonnet files
// are evaluated by Argo CD, not by kiln (one warning).
func (r *run) renderDirectory(a *app, s *source, dir, name string) *discover.Unit {
	var recurse bool
	var include, exclude *regexp.Regexp
	if d := s.Directory; d != nil {
		recurse = d.Recurse
		include, exclude = globs(d.Include), globs(d.Exclude)
	}
	src := &manifest.Source{Path: dir}
	var jsonnet []string
	dest := a.spec.Spec.Destination.Namespace
	doc := 0
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			if p != dir && (!recurse || strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		ext := strings.ToLower(filepath.Ext(p))
		switch ext {
		case ".yaml", ".yml", ".json", ".jsonnet":
		default:
			return nil
		}
		if (include != nil && !include.MatchString(rel)) || (exclude != nil && exclude.MatchString(rel)) {
			return nil
		}
		if ext == ".jsonnet" {
			jsonnet = append(jsonnet, rel)
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			src.Errs = append(src.Errs, &manifest.Error{Pos: manifest.Position{File: p}, Msg: "cannot read: " + manifest.PathErr(err)})
			return nil
		}
		r.out.Consumed[pathkey.Real(p)] = true
		objs, _, errs := manifest.ParseSkipping(p, data)
		src.Errs = append(src.Errs, errs...)
		for _, o := range objs {
			n := o.Node()
			setNamespace(n, dest)
			ro, err := manifest.NewRenderedObject(p, name, doc, n)
			doc++
			if err != nil {
				src.Errs = append(src.Errs, err)
				continue
			}
			src.Objects = append(src.Objects, ro)
		}
		return nil
	})
	if len(jsonnet) > 0 {
		r.warn(a, "Jsonnet is not rendered (kiln evaluates no Jsonnet): %s", strings.Join(jsonnet, ", "))
		if len(src.Objects) == 0 && len(src.Errs) == 0 {
			return nil // nothing but Jsonnet: not rendered
		}
	}
	return &discover.Unit{Kind: UnitKind, Dir: name, Source: src}
}

// globs compiles an include or exclude pattern ("" none): `*` and `?`
// match any characters, `/` included, as Argo CD's glob.Match does;
// {a,b} is either; [...] a class.
func globs(pattern string) *regexp.Regexp {
	if pattern == "" {
		return nil
	}
	var b strings.Builder
	b.WriteString("^")
	depth, class := 0, false
	for _, c := range pattern {
		switch {
		case class:
			switch c {
			case ']':
				class = false
				b.WriteRune(c)
			case '!':
				b.WriteString("^")
			case '\\':
				b.WriteString(`\\`)
			default:
				b.WriteRune(c)
			}
		case c == '[':
			class = true
			b.WriteRune(c)
		case c == '*':
			b.WriteString(".*")
		case c == '?':
			b.WriteString(".")
		case c == '{':
			depth++
			b.WriteString("(?:")
		case c == '}' && depth > 0:
			depth--
			b.WriteString(")")
		case c == ',' && depth > 0:
			b.WriteString("|")
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString("$")
	re, err := regexp.Compile(b.String())
	if err != nil {
		return regexp.MustCompile("^" + regexp.QuoteMeta(pattern) + "$")
	}
	return re
}
