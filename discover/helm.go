package discover

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/kilnhq/kiln/manifest"
	"helm.sh/helm/v4/pkg/chart/common"
	commonutil "helm.sh/helm/v4/pkg/chart/common/util"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
	"helm.sh/helm/v4/pkg/engine"
	"helm.sh/helm/v4/pkg/strvals"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// renderChart renders the chart in dir with Helm's own loader and engine, as
// `helm template` would, offline: dependencies come from charts/ or from a
// file:// repository, never from the network, and the engine has no
// cluster (lookup returns nothing). What Helm logs while it loads and
// renders (a symbolic link it follows, a value it skips) comes back as
// warnings naming the chart's file.
func renderChart(dir string, opts Options) (*manifest.Source, []error) {
	logged := captureOutput()
	var notes []error
	src := render(dir, opts, &notes)
	return src, append(helmNotes(dir, logged()), notes...)
}

// render is renderChart without the log; what the values' schema check
// could not do offline goes to notes.
func render(dir string, opts Options, notes *[]error) *manifest.Source {
	chartFile := filepath.Join(dir, "Chart.yaml")
	src := &manifest.Source{Path: chartFile}
	fail := func(pos manifest.Position, format string, args ...any) *manifest.Source {
		if pos.File == "" {
			pos = manifest.Position{File: chartFile, Line: 1, Column: 1}
		}
		src.Errs = append(src.Errs, &manifest.Error{Pos: pos, Msg: fmt.Sprintf(format, args...)})
		return src
	}
	ch, err := loader.LoadDir(dir)
	if err != nil {
		return fail(manifest.Position{}, "cannot load the Helm chart: %v", err)
	}
	if missing := resolveDependencies(ch, dir); len(missing) > 0 {
		for _, m := range missing {
			fail(m.pos, "chart %q needs dependency %q (repository %q), which is not in charts/: run `helm dependency build %s` (kiln never fetches charts)", ch.Name(), m.name, m.repo, dir)
		}
		return src
	}
	var set ChartSettings
	if opts.Chart != nil {
		set = opts.Chart(dir)
	}
	vals := map[string]any{}
	for _, f := range set.ValueFiles {
		v, err := common.ReadValuesFile(f)
		if err != nil {
			return fail(manifest.Position{File: f}, "cannot read Helm values: %v", err)
		}
		vals = mergeMaps(vals, v.AsMap())
	}
	for _, s := range set.Set {
		if err := strvals.ParseInto(s, vals); err != nil {
			return fail(manifest.Position{File: "--set " + s}, "%v", err)
		}
	}
	rel := common.ReleaseOptions{Name: orDefault(set.ReleaseName, "release-name"), Namespace: orDefault(set.Namespace, "default"), Revision: 1, IsInstall: true}
	return renderLoaded(src, chartRender{
		ch: ch, vals: vals, rel: rel, kube: opts.KubeVersion, crds: true, unit: dir, pos: chartPos(dir), notes: notes,
		valuesErr:   func(err error) error { return valuesError(ch, dir, set, err) },
		templateErr: func(err error) error { return templateError(ch, dir, set, err) },
		crdFile:     func(name string) string { return diskPath(dir, name) },
		place: func(name, text string) (string, func(*yaml.Node)) {
			lines := traceLines(text, templateOf(ch, name))
			return diskPath(dir, name), func(n *yaml.Node) { mapLines(n, lines) }
		},
	})
}

// chartRender is one rendering of a loaded chart: its values (over the
// chart's own), the release, and where its objects are placed.
type chartRender struct {
	ch   *chart.Chart
	vals map[string]any
	rel  common.ReleaseOptions
	kube manifest.KubeVersion
	// crds puts the chart's crds/ among the objects (helm install does,
	// helm template only with --include-crds).
	crds bool
	// unit names the rendered unit the objects belong to.
	unit string
	// pos is where a problem of the whole chart is reported.
	pos manifest.Position
	// valuesErr and templateErr say why the values or a template failed.
	valuesErr, templateErr func(error) error
	// crdFile names the file a crds/ file's objects are in.
	crdFile func(name string) string
	// place returns, for a template's rendered output, the file its
	// objects are placed in and a function that moves each object's
	// nodes to their lines there (0: at the nearest placed parent).
	place func(name, text string) (string, func(*yaml.Node))
	// notes receives what the values' schema check could not do offline.
	notes *[]error
	// edit changes each template object's tree before it is made an
	// object (a HelmRelease's origin labels), post replaces the template
	// objects (a HelmRelease's post-renderers, which then edit); crds/ are
	// neither edited nor post-rendered, as Helm installs them apart.
	edit []func(*yaml.Node)
	post func([]*manifest.Object) ([]*manifest.Object, error)
	// apiVersions are added to the capabilities' API versions (helm
	// template --api-versions).
	apiVersions []string
	// given, when set, moves an object one of whose scalar `key: value`
	// pairs the asker's own values set exactly to givenFile, placed there
	// (valueTrace; the rest at givenPos).
	given     *valueTrace
	givenFile string
	givenPos  manifest.Position
}

// renderLoaded renders r's chart as `helm template` does, with Helm's
// engine and no cluster, and appends the objects and errors to src.
func renderLoaded(src *manifest.Source, r chartRender) *manifest.Source {
	if err := chartutil.ProcessDependencies(r.ch, r.vals); err != nil {
		src.Errs = append(src.Errs, &manifest.Error{Pos: r.pos, Msg: fmt.Sprintf("Helm dependencies: %v", err)})
		return src
	}
	values, err := r.renderValues()
	if err != nil {
		src.Errs = append(src.Errs, r.valuesErr(err))
		return src
	}
	// Helm's random functions draw from a stream seeded by the chart and
	// release (seededFuncs): the same input renders to the same bytes.
	eng := engine.Engine{CustomTemplateFuncs: seededFuncs(r.ch.Name(), r.ch.Metadata.Version, r.rel.Name, r.rel.Namespace)}
	rendered, err := eng.Render(r.ch, values)
	if err != nil {
		src.Errs = append(src.Errs, r.templateErr(err))
		return src
	}
	if r.crds {
		r.addCRDs(src)
	}
	tobjs := r.templateObjects(src, rendered)
	if r.post != nil && len(src.Errs) == 0 {
		out, err := r.post(tobjs)
		if err != nil {
			src.Errs = append(src.Errs, &manifest.Error{Pos: r.pos, Msg: err.Error()})
			return src
		}
		tobjs = out
	}
	src.Objects = append(src.Objects, tobjs...)
	return src
}

// renderValues is what the templates see: the chart's values with r's over
// them, checked against its values.schema.json, with the release and the
// capabilities of the target version (and r's extra API versions). What
// the values check only warns of goes to r.notes.
func (r *chartRender) renderValues() (common.Values, error) {
	caps := common.DefaultCapabilities.Copy()
	kv := r.kube
	if kv.Major == 0 {
		kv = manifest.LatestKube
	}
	if v, err := common.ParseKubeVersion(fmt.Sprintf("v%d.%d.0", kv.Major, kv.Minor)); err == nil {
		caps.KubeVersion = *v
	}
	if len(r.apiVersions) > 0 {
		caps.APIVersions = append(slices.Clone(caps.APIVersions), r.apiVersions...)
	}
	values, err := commonutil.ToRenderValuesWithSchemaValidation(r.ch, r.vals, r.rel, caps, true)
	if err != nil {
		return nil, err
	}
	notes, err := validateValues(r.ch, values["Values"].(common.Values))
	if r.notes != nil {
		for _, n := range notes {
			*r.notes = append(*r.notes, &manifest.Error{Pos: r.pos, Msg: "warning: " + n})
		}
	}
	return values, err
}

// addCRDs adds the chart's crds/ objects to src, as Helm installs them.
func (r *chartRender) addCRDs(src *manifest.Source) {
	for _, crd := range r.ch.CRDObjects() {
		file := r.crdFile(crd.Filename)
		objs, errs := manifest.ParseRendered(file, crd.File.Data)
		src.Errs = append(src.Errs, errs...)
		for _, o := range objs {
			o.Unit = r.unit
			src.Objects = append(src.Objects, o)
		}
	}
}

// templateObjects parses the rendered templates, in name order, into
// objects placed in their templates (or at the values that gave them),
// edited by r.edit unless a post-renderer follows; errors go to src.
func (r *chartRender) templateObjects(src *manifest.Source, rendered map[string]string) []*manifest.Object {
	var tobjs []*manifest.Object
	doc := 0
	for _, name := range slices.Sorted(maps.Keys(rendered)) {
		base := filepath.Base(name)
		text := rendered[name]
		if strings.HasPrefix(base, "_") || base == "NOTES.txt" || strings.TrimSpace(text) == "" {
			continue
		}
		file, move := r.place(name, text)
		for _, d := range splitRendered(text) {
			objs, errs := manifest.ParseRendered(file, []byte(d.text))
			for _, err := range errs {
				src.Errs = append(src.Errs, renderedError(err, name, d))
			}
			for _, o := range objs {
				ro, err := r.placed(o.Node(), d, file, move, doc)
				doc++
				if err != nil {
					src.Errs = append(src.Errs, renderedError(err, name, renderedDoc{line: 1, col: 1}))
					continue
				}
				tobjs = append(tobjs, ro)
			}
		}
	}
	return tobjs
}

// placed makes the object of rendered node n, of document d of file:
// positioned in its template by move, or at the values that gave it, and
// edited.
func (r *chartRender) placed(n *yaml.Node, d renderedDoc, file string, move func(*yaml.Node), doc int) (*manifest.Object, error) {
	shiftNode(n, d.line-1, d.col-1)
	move(n)
	at := file
	if r.given != nil && r.given.matches(n) {
		r.given.place(n, r.givenPos)
		at = r.givenFile
	}
	if n.Line == 0 {
		n.Line, n.Column = 1, 1
	}
	fillPositions(n, nil)
	if r.post == nil {
		for _, e := range r.edit {
			e(n)
		}
		fillPositions(n, nil)
	}
	return manifest.NewRenderedObject(at, r.unit, doc, n)
}

// renderedError says an error's line is in the rendered output of a
// template; d is where the document the error's line counts in starts.
func renderedError(err error, name string, d renderedDoc) error {
	if e, ok := err.(*manifest.Error); ok {
		if e.Pos.Line == 1 {
			e.Pos.Column += d.col - 1
		}
		if e.Pos.Line > 0 {
			e.Pos.Line += d.line - 1
		}
		e.Msg += " (in the rendered output of " + name + ", line " + strconv.Itoa(e.Pos.Line) + ")"
		return e
	}
	return err
}

// diskPath turns a chart-relative template name ("mychart/templates/x.yaml")
// into a path under the chart's directory.
func diskPath(dir, name string) string {
	if i := strings.IndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	return filepath.Join(dir, filepath.FromSlash(name))
}

// templateOf returns the source of a rendered template ("" if not found).
func templateOf(ch *chart.Chart, name string) string {
	parts := strings.Split(name, "/")
	c := ch
	for len(parts) > 3 && parts[1] == "charts" {
		var next *chart.Chart
		for _, d := range c.Dependencies() {
			if d.Name() == parts[2] {
				next = d
			}
		}
		if next == nil {
			return ""
		}
		c, parts = next, parts[2:]
	}
	rel := strings.Join(parts[1:], "/")
	for _, t := range c.Templates {
		if t.Name == rel {
			return string(t.Data)
		}
	}
	return ""
}

type missingDep struct {
	name, repo string
	pos        manifest.Position
}

// resolveDependencies loads file:// dependencies that are not in charts/
// (as `helm dependency build` would copy them) and returns those still missing.
func resolveDependencies(ch *chart.Chart, dir string) []missingDep {
	var missing []missingDep
	if ch.Metadata == nil {
		return nil
	}
outer:
	for _, d := range ch.Metadata.Dependencies {
		for _, have := range ch.Dependencies() {
			if have.Name() == d.Name {
				continue outer
			}
		}
		if strings.HasPrefix(d.Repository, "file://") {
			depDir := filepath.Join(dir, strings.TrimPrefix(d.Repository, "file://"))
			if sub, err := loader.LoadDir(depDir); err == nil && sub.Name() == d.Name {
				missing = append(missing, resolveDependencies(sub, depDir)...)
				ch.AddDependency(sub)
				continue
			}
		}
		missing = append(missing, missingDep{name: d.Name, repo: d.Repository, pos: dependencyPos(dir, d.Name)})
	}
	return missing
}

// dependencyPos finds where a dependency is declared (Chart.yaml, or
// requirements.yaml for apiVersion v1 charts).
func dependencyPos(dir, name string) manifest.Position {
	for _, f := range []string{"Chart.yaml", "requirements.yaml"} {
		file := filepath.Join(dir, f)
		data, err := os.ReadFile(file)
		if err != nil {
			continue
		}
		for i, l := range strings.Split(string(data), "\n") {
			t := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "-"))
			if t == "name: "+name || t == `name: "`+name+`"` || t == "name: '"+name+"'" {
				return manifest.Position{File: file, Line: i + 1, Column: strings.Index(l, "name") + 1}
			}
		}
	}
	return manifest.Position{File: filepath.Join(dir, "Chart.yaml"), Line: 1, Column: 1}
}

// mergeMaps merges b into a as Helm merges values files: maps deeply, everything else replaced.
func mergeMaps(a, b map[string]any) map[string]any {
	out := make(map[string]any, len(a))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		if bm, ok := v.(map[string]any); ok {
			if am, ok := out[k].(map[string]any); ok {
				out[k] = mergeMaps(am, bm)
				continue
			}
		}
		out[k] = v
	}
	return out
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// traceLines maps lines of a template's rendered output to lines of the
// template (0: not traced). Lines are matched in order: a rendered line
// equal to a template line (a literal line), else a key whose template line
// starts with the same key (a templated value); a line with no match within
// a short window (from a helper, a range or an include) stays untraced.
func traceLines(rendered, tmpl string) []int {
	rl := strings.Split(rendered, "\n")
	out := make([]int, len(rl)+1)
	if tmpl == "" {
		return out
	}
	tl := strings.Split(tmpl, "\n")
	trimmed := make([]string, len(tl))
	for i, l := range tl {
		trimmed[i] = strings.TrimSpace(l)
	}
	const window = 40
	cursor := 0
	for i, l := range rl {
		t := strings.TrimSpace(l)
		if t == "" || t == "---" || strings.HasPrefix(t, "#") {
			continue
		}
		found := -1
		for j := cursor; j < len(tl) && j < cursor+window; j++ {
			if trimmed[j] == t {
				found = j
				break
			}
		}
		if found < 0 {
			if key := keyOf(t); key != "" {
				for j := cursor; j < len(tl) && j < cursor+window; j++ {
					if strings.HasPrefix(trimmed[j], key) && strings.Contains(trimmed[j], "{{") {
						found = j
						break
					}
				}
			}
		}
		if found < 0 {
			found = onlyMatch(trimmed, cursor+window, t)
		}
		if found >= 0 {
			out[i+1] = found + 1
			cursor = found + 1
		}
	}
	return out
}

// onlyMatch returns the one template line from from on that is the
// literal line t, -1 when none or several are: past a block the values
// turned off (metallb's speaker.yaml renders nothing of its first 123
// lines), the output resumes at a line the rest of the template holds once.
func onlyMatch(trimmed []string, from int, t string) int {
	found := -1
	for j := from; j < len(trimmed); j++ {
		if trimmed[j] == t {
			if found >= 0 {
				return -1
			}
			found = j
		}
	}
	return found
}

// keyOf returns "key:" (with a leading "- " if any) of a `key: value` line, or "".
func keyOf(line string) string {
	i := strings.Index(line, ":")
	if i <= 0 || strings.ContainsAny(line[:i], "{}\"'") {
		return ""
	}
	return line[:i+1]
}

// mapLines moves every node to its traced template line (0 where untraced:
// Locate then uses its nearest traced parent). Columns are kept: a traced
// line's indentation is the rendered one's where the template is literal.
func mapLines(n *yaml.Node, lines []int) {
	if n == nil {
		return
	}
	if n.Line > 0 && n.Line < len(lines) && lines[n.Line] > 0 {
		n.Line = lines[n.Line]
	} else {
		n.Line, n.Column = 0, 0
	}
	for _, c := range n.Content {
		mapLines(c, lines)
	}
}
