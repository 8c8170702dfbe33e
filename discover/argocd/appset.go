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
	jsonpatch "gopkg.in/evanphx/json-patch.v4"
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
// options, else fasttemplate's {{param}}), its templatePatch applied.
func (r *run) generate(o *manifest.Object) []*app {
	id := o.Namespace + "/" + o.Name
	if o.Namespace == "" {
		id = "argocd/" + o.Name
	}
	if r.done["ApplicationSet "+id] {
		return nil
	}
	r.done["ApplicationSet "+id] = true
	as, err := readApplicationSet(o)
	if err != nil {
		r.out.Errs = append(r.out.Errs, &manifest.Error{Pos: o.Pos(), Msg: "ApplicationSet " + o.Name + ": " + err.Error()})
		return nil
	}
	warn := func(format string, args ...any) {
		r.out.Warnings = append(r.out.Warnings, &manifest.Error{Pos: o.Pos(), Msg: "warning: argocd: ApplicationSet " + o.Name + ": " + fmt.Sprintf(format, args...)})
	}
	g := &generation{r: r, set: as, id: id, warn: warn, obj: o, pos: o.Pos()}
	if t := yamlnode.Value(yamlnode.Value(o.Node(), "spec"), "template"); t != nil {
		g.pos.Line, g.pos.Column = t.Line, t.Column
	}
	var params []map[string]any
	for _, gen := range as.Spec.Generators {
		ps, ok := g.run(gen, 0)
		if !ok {
			return nil
		}
		params = append(params, ps...)
	}
	var apps []*app
	for _, p := range params {
		ao, stop, err := g.application(p)
		if err != nil {
			r.out.Errs = append(r.out.Errs, err)
			if stop {
				return nil
			}
			continue
		}
		if a := r.read(ao); a != nil {
			apps = append(apps, a)
		}
	}
	return apps
}

// readApplicationSet decodes an ApplicationSet object.
func readApplicationSet(o *manifest.Object) (*applicationSet, error) {
	c, err := o.Content()
	if err != nil {
		return nil, err
	}
	data, _ := json.Marshal(c)
	var as applicationSet
	if err := json.Unmarshal(data, &as); err != nil {
		return nil, fmt.Errorf("cannot read its spec: %v", err)
	}
	return &as, nil
}

// application renders the template (and templatePatch) with one
// parameter set into an Application object, placed at the template; stop
// when the template does not render (nothing of the ApplicationSet is
// generated then).
func (g *generation) application(p map[string]any) (_ *manifest.Object, stop bool, _ error) {
	o := g.obj
	out, err := g.render(g.set.Spec.Template, p)
	if err != nil {
		return nil, true, &manifest.Error{Pos: g.pos, Msg: "ApplicationSet " + o.Name + ": template: " + err.Error()}
	}
	m, _ := out.(map[string]any)
	if g.set.Spec.TemplatePatch != "" {
		if m, err = g.patch(m, p); err != nil {
			return nil, false, &manifest.Error{Pos: g.pos, Msg: "ApplicationSet " + o.Name + ": templatePatch: " + err.Error()}
		}
	}
	m["apiVersion"], m["kind"] = group+"/v1alpha1", "Application"
	md, _ := m["metadata"].(map[string]any)
	if md == nil {
		md = map[string]any{}
		m["metadata"] = md
	}
	if o.Namespace != "" {
		md["namespace"] = o.Namespace // the ApplicationSet's, whatever the template says
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
		return nil, false, &manifest.Error{Pos: g.pos, Msg: "ApplicationSet " + o.Name + ": " + err.Error()}
	}
	objs, errs := manifest.ParseRendered(o.File, y)
	if len(errs) > 0 || len(objs) != 1 {
		return nil, false, &manifest.Error{Pos: g.pos, Msg: fmt.Sprintf("ApplicationSet %s: a generated Application is not an object: %v", o.Name, errs)}
	}
	n := objs[0].Node()
	placeAll(n, g.pos)
	ao, err := manifest.NewRenderedObject(o.File, manifest.UnitOf(o), o.Doc, n)
	return ao, false, err
}

// patch applies the templatePatch, rendered with the parameter set as
// the template is, to a rendered Application, as the ApplicationSet
// controller's applyTemplatePatch does: a strategic merge patch over the
// Application type, whose lists have no merge keys (so a list replaces
// the list, a map merges into the map, null removes: RFC 7386's JSON
// merge patch), spec.project kept as the template rendered it.
func (g *generation) patch(app map[string]any, p map[string]any) (map[string]any, error) {
	text, err := g.render(g.set.Spec.TemplatePatch, p)
	if err != nil {
		return nil, err
	}
	patch, err := sigsyaml.YAMLToJSON([]byte(text.(string)))
	if err != nil {
		return nil, err
	}
	var shape map[string]any
	if err := json.Unmarshal(patch, &shape); err != nil {
		return nil, fmt.Errorf("invalid templatePatch: %v", err)
	}
	doc, err := json.Marshal(app)
	if err != nil {
		return nil, err
	}
	merged, err := jsonpatch.MergePatch(doc, patch)
	if err != nil {
		return nil, err
	}
	out := map[string]any{}
	if err := json.Unmarshal(merged, &out); err != nil {
		return nil, err
	}
	spec, _ := out["spec"].(map[string]any)
	orig, _ := app["spec"].(map[string]any)
	if spec != nil {
		if project, ok := orig["project"]; ok {
			spec["project"] = project
		} else {
			delete(spec, "project")
		}
	}
	return out, nil
}

// generation is one ApplicationSet's generators run.
type generation struct {
	r    *run
	set  *applicationSet
	id   string
	warn func(string, ...any)
	// obj is the ApplicationSet; pos its template, where the
	// Applications it generates are placed.
	obj *manifest.Object
	pos manifest.Position
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
	var out []map[string]any
	if dirs, ok := m["directories"].([]any); ok {
		out = g.gitDirectories(dirs)
	}
	if files, ok := m["files"].([]any); ok {
		ps, ok := g.gitFiles(files)
		if !ok {
			return nil, false
		}
		out = append(out, ps...)
	}
	return out, true
}

// repoPaths lists this repository's folders (dirs) or files, below its
// root, slash-separated, hidden folders left out.
func (g *generation) repoPaths(dirs bool) []string {
	root := g.r.repo.root
	var all []string
	_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), ".") && p != root {
			return filepath.SkipDir
		}
		if d.IsDir() != dirs {
			return nil
		}
		if rel, err := filepath.Rel(root, p); err == nil && rel != "." {
			all = append(all, filepath.ToSlash(rel))
		}
		return nil
	})
	return all
}

// gitDirectories are the parameters of the folders the directories
// match, the last matching entry deciding (exclude drops the folder).
func (g *generation) gitDirectories(dirs []any) []map[string]any {
	var out []map[string]any
	for _, p := range g.repoPaths(true) {
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
	return out
}

// gitFiles are the parameters of each JSON or YAML file the files match
// (one set per object of a file holding a list).
func (g *generation) gitFiles(files []any) ([]map[string]any, bool) {
	all := g.repoPaths(false)
	var out []map[string]any
	for _, f := range files {
		fm, _ := f.(map[string]any)
		pat, _ := fm["path"].(string)
		for _, p := range all {
			if !pathMatch(pat, p) {
				continue
			}
			data, err := os.ReadFile(filepath.Join(g.r.repo.root, filepath.FromSlash(p)))
			if err != nil {
				continue
			}
			var one any
			if err := sigsyaml.Unmarshal(data, &one); err != nil {
				g.warn("git files %s: %v", p, err)
				return nil, false
			}
			var docs []map[string]any
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
