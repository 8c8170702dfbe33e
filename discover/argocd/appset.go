package argocd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"text/template"

	"github.com/Masterminds/sprig/v3"
	"github.com/kilnhq/kiln/internal/yamlnode"
	"github.com/kilnhq/kiln/manifest"
	sigsyaml "sigs.k8s.io/yaml"
)

// applicationSet is the part of an ApplicationSet that decides the
// Applications it generates.
type applicationSet struct {
	Spec struct {
		GoTemplate        bool             `json:"goTemplate"`
		GoTemplateOptions []string         `json:"goTemplateOptions"`
		Generators        []map[string]any `json:"generators"`
		Template          map[string]any   `json:"template"`
		TemplatePatch     string           `json:"templatePatch"`
	} `json:"spec"`
}

// generate makes the Applications an ApplicationSet generates: its
// generators' parameter sets (list, git directories and files of this
// repository, matrix and merge of those; others from argocd.generators
// of .kiln.yaml, else one warning) rendered into its template with the
// ApplicationSet controller's semantics (goTemplate with sprig and its
// options, else fasttemplate's {{param}}).
func (r *run) generate(o *manifest.Object) []*app {
	id := o.Namespace + "/" + o.Name
	if o.Namespace == "" {
		id = "argocd/" + o.Name
	}
	if r.done["ApplicationSet "+id] {
		return nil
	}
	r.done["ApplicationSet "+id] = true
	warn := func(format string, args ...any) {
		r.out.Warnings = append(r.out.Warnings, &manifest.Error{Pos: o.Pos(), Msg: "warning: argocd: ApplicationSet " + o.Name + ": " + fmt.Sprintf(format, args...)})
	}
	c, err := o.Content()
	if err != nil {
		r.out.Errs = append(r.out.Errs, &manifest.Error{Pos: o.Pos(), Msg: "ApplicationSet " + o.Name + ": " + err.Error()})
		return nil
	}
	data, _ := json.Marshal(c)
	var as applicationSet
	if err := json.Unmarshal(data, &as); err != nil {
		r.out.Errs = append(r.out.Errs, &manifest.Error{Pos: o.Pos(), Msg: "ApplicationSet " + o.Name + ": cannot read its spec: " + err.Error()})
		return nil
	}
	if as.Spec.TemplatePatch != "" {
		warn("its templatePatch is not applied (kiln renders spec.template)")
	}
	g := &generation{r: r, set: &as, id: id, warn: warn}
	var params []map[string]any
	for _, gen := range as.Spec.Generators {
		ps, ok := g.run(gen, 0)
		if !ok {
			return nil
		}
		params = append(params, ps...)
	}
	pos := o.Pos()
	if t := yamlnode.Value(yamlnode.Value(o.Node(), "spec"), "template"); t != nil {
		pos.Line, pos.Column = t.Line, t.Column
	}
	var apps []*app
	for _, p := range params {
		out, err := g.render(as.Spec.Template, p)
		if err != nil {
			r.out.Errs = append(r.out.Errs, &manifest.Error{Pos: pos, Msg: "ApplicationSet " + o.Name + ": template: " + err.Error()})
			return nil
		}
		m, _ := out.(map[string]any)
		m["apiVersion"], m["kind"] = group+"/v1alpha1", "Application"
		md, _ := m["metadata"].(map[string]any)
		if md == nil {
			md = map[string]any{}
			m["metadata"] = md
		}
		if _, ok := md["namespace"]; !ok && o.Namespace != "" {
			md["namespace"] = o.Namespace
		}
		if ig := o.Annotations[ignoreAnnotation]; ig != "" {
			ann, _ := md["annotations"].(map[string]any)
			if ann == nil {
				ann = map[string]any{}
			}
			if _, ok := ann[ignoreAnnotation]; !ok {
				ann[ignoreAnnotation] = ig
			}
			md["annotations"] = ann
		}
		y, err := sigsyaml.Marshal(m)
		if err != nil {
			continue
		}
		objs, errs := manifest.ParseRendered(o.File, y)
		if len(errs) > 0 || len(objs) != 1 {
			r.out.Errs = append(r.out.Errs, &manifest.Error{Pos: pos, Msg: fmt.Sprintf("ApplicationSet %s: a generated Application is not an object: %v", o.Name, errs)})
			continue
		}
		n := objs[0].Node()
		placeAll(n, pos)
		ao, err := manifest.NewRenderedObject(o.File, manifest.UnitOf(o), o.Doc, n)
		if err != nil {
			r.out.Errs = append(r.out.Errs, err)
			continue
		}
		if a := r.read(ao); a != nil {
			apps = append(apps, a)
		}
	}
	return apps
}

// generation is one ApplicationSet's generators run.
type generation struct {
	r    *run
	set  *applicationSet
	id   string
	warn func(string, ...any)
}

// run returns a generator's parameter sets; false when the
// ApplicationSet cannot be generated (said).
func (g *generation) run(gen map[string]any, depth int) ([]map[string]any, bool) {
	if depth > 2 {
		g.warn("its generators nest deeper than matrix and merge allow")
		return nil, false
	}
	kinds := make([]string, 0, len(gen))
	for k := range gen {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, kind := range kinds {
		m, _ := gen[kind].(map[string]any)
		switch kind {
		case "selector", "values":
			continue
		case "list":
			return g.list(m), true
		case "git":
			return g.git(m)
		case "matrix":
			return g.matrix(m, depth)
		case "merge":
			return g.merge(m, depth)
		default:
			if sets, ok := g.r.c.Parameters[g.id]; ok {
				return sets, true
			}
			g.warn("its %s generator needs what kiln cannot know offline (clusters, SCM providers, pull requests, plugins); list its parameter sets in argocd.generators.%s of .kiln.yaml; nothing is generated", kind, g.id)
			return nil, false
		}
	}
	return nil, true
}

func (g *generation) list(m map[string]any) []map[string]any {
	els, _ := m["elements"].([]any)
	var out []map[string]any
	for _, e := range els {
		if em, ok := e.(map[string]any); ok {
			out = append(out, g.params(em))
		}
	}
	return out
}

// params makes an element's values parameters: as they are for
// goTemplate, flattened to "a.b" strings for fasttemplate.
func (g *generation) params(m map[string]any) map[string]any {
	if g.set.Spec.GoTemplate {
		return m
	}
	out := map[string]any{}
	var flat func(prefix string, v any)
	flat = func(prefix string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, c := range x {
				flat(join(prefix, k), c)
			}
		default:
			out[prefix] = fmt.Sprint(v)
		}
	}
	for k, v := range m {
		flat(k, v)
	}
	return out
}

func join(prefix, k string) string {
	if prefix == "" {
		return k
	}
	return prefix + "." + k
}

// git runs a git generator over this repository's folders.
func (g *generation) git(m map[string]any) ([]map[string]any, bool) {
	repoURL, _ := m["repoURL"].(string)
	if !g.r.repo.is(repoURL) {
		g.warn("its git generator reads %s, which is not this repository; nothing is generated", orQuote(repoURL))
		return nil, false
	}
	root := g.r.repo.root
	var out []map[string]any
	if dirs, ok := m["directories"].([]any); ok {
		var all []string
		_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err != nil || !d.IsDir() {
				return nil
			}
			if strings.HasPrefix(d.Name(), ".") && p != root {
				return filepath.SkipDir
			}
			if rel, err := filepath.Rel(root, p); err == nil && rel != "." {
				all = append(all, filepath.ToSlash(rel))
			}
			return nil
		})
		for _, p := range all {
			keep := false
			for _, d := range dirs {
				dm, _ := d.(map[string]any)
				pat, _ := dm["path"].(string)
				ex, _ := dm["exclude"].(bool)
				if pathMatch(pat, p) {
					if ex {
						keep = false
						break
					}
					keep = true
				}
			}
			if keep {
				out = append(out, g.pathParams(p, "", nil))
			}
		}
	}
	if files, ok := m["files"].([]any); ok {
		var all []string
		_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if d.IsDir() && strings.HasPrefix(d.Name(), ".") && p != root {
				return filepath.SkipDir
			}
			if !d.IsDir() {
				if rel, err := filepath.Rel(root, p); err == nil {
					all = append(all, filepath.ToSlash(rel))
				}
			}
			return nil
		})
		for _, f := range files {
			fm, _ := f.(map[string]any)
			pat, _ := fm["path"].(string)
			for _, p := range all {
				if !pathMatch(pat, p) {
					continue
				}
				data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(p)))
				if err != nil {
					continue
				}
				var docs []map[string]any
				var one any
				if err := sigsyaml.Unmarshal(data, &one); err != nil {
					g.warn("git files %s: %v", p, err)
					return nil, false
				}
				switch x := one.(type) {
				case map[string]any:
					docs = append(docs, x)
				case []any:
					for _, e := range x {
						if em, ok := e.(map[string]any); ok {
							docs = append(docs, em)
						}
					}
				}
				for _, d := range docs {
					out = append(out, g.pathParams(filepath.ToSlash(filepath.Dir(p)), filepath.Base(p), d))
				}
			}
		}
	}
	return out, true
}

var invalidDNS = regexp.MustCompile(`[^-a-z0-9.]`)

// normalized is the ApplicationSet controller's sanitizeName.
func normalized(s string) string {
	s = invalidDNS.ReplaceAllString(strings.ToLower(s), "-")
	if len(s) > 253 {
		s = s[:253]
	}
	return strings.Trim(s, "-.")
}

// pathParams are a git generator's parameters for a folder (and a file
// in it, with its content).
func (g *generation) pathParams(dir, file string, content map[string]any) map[string]any {
	segs := strings.Split(dir, "/")
	if g.set.Spec.GoTemplate {
		p := map[string]any{"path": dir, "basename": filepath.Base(dir), "basenameNormalized": normalized(filepath.Base(dir)), "segments": anySlice(segs)}
		if file != "" {
			p["filename"], p["filenameNormalized"] = file, normalized(file)
		}
		out := map[string]any{}
		for k, v := range content {
			out[k] = v
		}
		out["path"] = p
		return out
	}
	out := g.params(content)
	out["path"], out["path.basename"], out["path.basenameNormalized"] = dir, filepath.Base(dir), normalized(filepath.Base(dir))
	if file != "" {
		out["path.filename"], out["path.filenameNormalized"] = file, normalized(file)
	}
	for i, s := range segs {
		out["path["+strconv.Itoa(i)+"]"] = s
	}
	return out
}

func anySlice(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// pathMatch matches a repository path with a git generator's glob: `*`
// within a folder, `**` across folders, `?`, [...] classes.
func pathMatch(pattern, p string) bool {
	var b strings.Builder
	b.WriteString("^")
	for i := 0; i < len(pattern); i++ {
		c := pattern[i]
		switch {
		case c == '*' && i+1 < len(pattern) && pattern[i+1] == '*':
			b.WriteString(".*")
			i++
			if i+1 < len(pattern) && pattern[i+1] == '/' {
				b.WriteString("/?")
				i++
			}
		case c == '*':
			b.WriteString("[^/]*")
		case c == '?':
			b.WriteString("[^/]")
		case c == '[' || c == ']':
			b.WriteByte(c)
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString("$")
	re, err := regexp.Compile(b.String())
	return err == nil && re.MatchString(p)
}

// matrix is the cartesian product of two generators' parameters, each
// pair merged.
func (g *generation) matrix(m map[string]any, depth int) ([]map[string]any, bool) {
	gens, _ := m["generators"].([]any)
	if len(gens) != 2 {
		g.warn("its matrix generator has %d generators (Argo CD takes 2); nothing is generated", len(gens))
		return nil, false
	}
	var sets [2][]map[string]any
	for i, x := range gens {
		gm, _ := x.(map[string]any)
		ps, ok := g.run(gm, depth+1)
		if !ok {
			return nil, false
		}
		sets[i] = ps
	}
	var out []map[string]any
	for _, a := range sets[0] {
		for _, b := range sets[1] {
			out = append(out, mergeParams(a, b))
		}
	}
	return out, true
}

// merge takes the first generator's parameter sets and, for each of the
// others, overrides those whose mergeKeys values are equal.
func (g *generation) merge(m map[string]any, depth int) ([]map[string]any, bool) {
	gens, _ := m["generators"].([]any)
	var keys []string
	for _, k := range asSlice(m["mergeKeys"]) {
		if s, ok := k.(string); ok {
			keys = append(keys, s)
		}
	}
	var base []map[string]any
	for i, x := range gens {
		gm, _ := x.(map[string]any)
		ps, ok := g.run(gm, depth+1)
		if !ok {
			return nil, false
		}
		if i == 0 {
			base = ps
			continue
		}
		for _, p := range ps {
			for j, b := range base {
				if sameKeys(b, p, keys) {
					base[j] = mergeParams(b, p)
				}
			}
		}
	}
	return base, true
}

func asSlice(v any) []any {
	s, _ := v.([]any)
	return s
}

func sameKeys(a, b map[string]any, keys []string) bool {
	if len(keys) == 0 {
		return false
	}
	for _, k := range keys {
		av, aok := lookup(a, k)
		bv, bok := lookup(b, k)
		if !aok || !bok || fmt.Sprint(av) != fmt.Sprint(bv) {
			return false
		}
	}
	return true
}

// lookup reads a parameter by its flat name or its dotted path.
func lookup(m map[string]any, k string) (any, bool) {
	if v, ok := m[k]; ok {
		return v, true
	}
	var cur any = m
	for _, p := range strings.Split(k, ".") {
		cm, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = cm[p]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// mergeParams merges b over a, maps deeply.
func mergeParams(a, b map[string]any) map[string]any {
	out := make(map[string]any, len(a)+len(b))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		if bm, ok := v.(map[string]any); ok {
			if am, ok := out[k].(map[string]any); ok {
				out[k] = mergeParams(am, bm)
				continue
			}
		}
		out[k] = v
	}
	return out
}

// funcs are sprig's functions without those that read the environment
// or the network, as the ApplicationSet controller's.
var funcs = func() template.FuncMap {
	f := sprig.TxtFuncMap()
	for _, k := range []string{"env", "expandenv", "getHostByName"} {
		delete(f, k)
	}
	f["toYaml"] = func(v any) string {
		data, err := sigsyaml.Marshal(v)
		if err != nil {
			return ""
		}
		return strings.TrimSuffix(string(data), "\n")
	}
	f["fromYaml"] = func(s string) map[string]any {
		m := map[string]any{}
		_ = sigsyaml.Unmarshal([]byte(s), &m)
		return m
	}
	f["fromYamlArray"] = func(s string) []any {
		var a []any
		_ = sigsyaml.Unmarshal([]byte(s), &a)
		return a
	}
	return f
}()

var fastTag = regexp.MustCompile(`{{\s*([^{}]*?)\s*}}`)

// render renders a template value with one parameter set: each string in
// it, as the ApplicationSet controller renders the template's fields.
func (g *generation) render(v any, params map[string]any) (any, error) {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			r, err := g.render(x[k], params)
			if err != nil {
				return nil, err
			}
			out[k] = r
		}
		return out, nil
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			r, err := g.render(e, params)
			if err != nil {
				return nil, err
			}
			out[i] = r
		}
		return out, nil
	case string:
		if !strings.Contains(x, "{{") {
			return x, nil
		}
		if !g.set.Spec.GoTemplate {
			return fastTag.ReplaceAllStringFunc(x, func(tag string) string {
				k := fastTag.FindStringSubmatch(tag)[1]
				if v, ok := params[k]; ok {
					return fmt.Sprint(v)
				}
				return tag
			}), nil
		}
		t := template.New("").Funcs(funcs)
		for _, o := range g.set.Spec.GoTemplateOptions {
			switch o {
			case "missingkey=default", "missingkey=invalid", "missingkey=zero", "missingkey=error":
				t = t.Option(o)
			default:
				return nil, fmt.Errorf("goTemplateOptions: %q is not a text/template option", o)
			}
		}
		t, err := t.Parse(x)
		if err != nil {
			return nil, err
		}
		var buf bytes.Buffer
		if err := t.Execute(&buf, params); err != nil {
			return nil, err
		}
		return buf.String(), nil
	}
	return v, nil
}
