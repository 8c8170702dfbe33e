package discover

import (
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/kilnhq/kiln/manifest"
	chart "helm.sh/helm/v4/pkg/chart/v2"
)

// valuesError says why a chart's values do not meet its values.schema.json
// and where to give the values it needs. Helm's message lists the
// violations a line each ("- at '/policy': got null, want string"), under
// the name of the chart whose schema they break.
func valuesError(ch *chart.Chart, dir string, set ChartSettings, err error) error {
	violations := schemaViolations(ch, err)
	if len(violations) == 0 {
		return &manifest.Error{Pos: chartPos(dir), Msg: "chart " + strconv.Quote(ch.Name()) + " cannot render: its values: " + err.Error()}
	}
	example := ""
	for _, v := range violations {
		if k := schemaKey(v); k != "" {
			example = " (e.g. [" + k + "=…])"
			break
		}
	}
	return &manifest.Error{Pos: chartPos(dir), Msg: "chart " + strconv.Quote(ch.Name()) + " cannot render: its values do not meet its values.schema.json (" +
		strings.Join(violations, "; ") + "): " + valuesHint(dir, set, example)}
}

// schemaViolations lists the violations a values schema error holds, a
// line each in Helm's message ("- at '/policy': got null, want string")
// under the name of the chart whose schema they break (named when it is
// not ch), sorted: the validator reports them in map order, and a report
// must not change between runs.
func schemaViolations(ch *chart.Chart, err error) []string {
	var out []string
	name := ""
	for _, l := range strings.Split(err.Error(), "\n") {
		l = strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(l, "- "):
			v := strings.TrimPrefix(l, "- ")
			if name != "" && name != ch.Name() {
				v = "chart " + name + " " + v
			}
			out = append(out, v)
		case strings.HasSuffix(l, ":") && !strings.Contains(l, " "):
			name = strings.TrimSuffix(l, ":")
		}
	}
	sort.Strings(out)
	return out
}

// schemaAt and schemaMissing read the place a schema violation names:
// "at '/image/tag': …", "at '/image': missing property 'repository'" and,
// at the top (Helm 4 drops a null value before the check), the empty path
// with "missing property 'policy'".
var (
	schemaAt      = regexp.MustCompile(`^at '(/?[^']*)'`)
	schemaMissing = regexp.MustCompile(`missing propert(?:y|ies) '([^']+)'`)
)

// schemaKey returns the --set key a violation is about ("" if none).
func schemaKey(v string) string {
	m := schemaAt.FindStringSubmatch(v)
	if m == nil {
		return ""
	}
	parts := strings.Split(strings.Trim(m[1], "/"), "/")
	if mm := schemaMissing.FindStringSubmatch(v); mm != nil {
		parts = append(parts, mm[1])
	}
	key := strings.Trim(strings.Join(parts, "."), ".")
	return key
}

// helmErrorAt reads where Helm's engine says a template failed:
// "execution error at (chart/templates/x.yaml:2:3): msg" (required, fail)
// or "parse error at (chart/templates/x.yaml:7): msg", else Go's
// "template: chart/templates/x.yaml:2:3: msg".
var (
	helmErrorAt  = regexp.MustCompile(`^(execution|parse) error at \(([^:()]+):(\d+)(?::(\d+))?\): (?s)(.*)$`)
	goTemplateAt = regexp.MustCompile(`^template: ([^:]+):(\d+)(?::(\d+))?: (?s)(.*)$`)
)

// templateError places the error of a chart that does not render at the
// template line Helm names, and says where to give values when the chart
// asked for one (a required or fail).
func templateError(ch *chart.Chart, dir string, set ChartSettings, err error) error {
	msg := err.Error()
	pos := chartPos(dir)
	kind := "execution"
	if m := helmErrorAt.FindStringSubmatch(msg); m != nil {
		kind, msg = m[1], m[5]
		pos = templatePos(dir, m[2], m[3], m[4])
	} else if m := goTemplateAt.FindStringSubmatch(msg); m != nil {
		msg = m[4]
		pos = templatePos(dir, m[1], m[2], m[3])
	}
	out := "chart " + strconv.Quote(ch.Name()) + " cannot render: " + strings.TrimSuffix(strings.TrimSpace(msg), ".")
	if kind == "execution" {
		out += ": if the chart needs values, " + valuesHint(dir, set, "")
	}
	return &manifest.Error{Pos: pos, Msg: out}
}

// valuesHint says where the values a chart needs are given.
func valuesHint(dir string, set ChartSettings, example string) string {
	key := set.Setting
	switch {
	case key != "":
	case filepath.Clean(dir) == ".":
		key = "helm" // the chart is where .kiln.yaml would be: helm.set, helm.values
	default:
		key = "helm.charts." + filepath.ToSlash(filepath.Clean(dir))
	}
	return "set them with " + key + ".set" + example + " or list values files in " + key + ".values in .kiln.yaml, or pass --set/--values"
}

func chartPos(dir string) manifest.Position {
	return manifest.Position{File: filepath.Join(dir, "Chart.yaml"), Line: 1, Column: 1}
}

// templatePos is the position of a chart template Helm names by its
// chart-relative name.
func templatePos(dir, name, line, col string) manifest.Position {
	p := manifest.Position{File: diskPath(dir, name)}
	p.Line, _ = strconv.Atoi(line)
	p.Column, _ = strconv.Atoi(col)
	if p.Column == 0 {
		p.Column = 1
	}
	return p
}

// helmNotes turns what Helm logged while loading and rendering the chart
// in dir into warnings: a symbolic link it followed names the link; any
// other line names the chart. Helm 4 logs through log/slog, whose default
// handler writes "LEVEL message key=value ..." to the standard logger.
func helmNotes(dir string, lines []string) []error {
	var out []error
	for _, l := range lines {
		l = trimLevel(l)
		if rest, ok := strings.CutPrefix(l, "found symbolic link in path. Contents of linked file included and used "); ok {
			link, target := slogAttr(rest, "path"), slogAttr(rest, "resolved")
			if link != "" && target != "" {
				out = append(out, &manifest.Error{Pos: manifest.Position{File: relOr(link)}, Msg: "warning: Helm follows this symbolic link to " + relOr(target) + " and reads the file there into the chart"})
				continue
			}
		}
		out = append(out, &manifest.Error{Pos: chartPos(dir), Msg: "warning: Helm: " + l})
	}
	return out
}

// trimLevel drops the level slog's default handler starts a line with.
func trimLevel(l string) string {
	for _, lvl := range []string{"DEBUG ", "INFO ", "WARN ", "ERROR "} {
		if rest, ok := strings.CutPrefix(l, lvl); ok {
			return rest
		}
	}
	return l
}

// slogAttr returns the value of key in the "key=value key2="quoted value""
// attributes slog's text form writes ("" if absent).
func slogAttr(attrs, key string) string {
	i := strings.Index(" "+attrs, " "+key+"=")
	if i < 0 {
		return ""
	}
	v := attrs[i+len(key)+1:]
	if strings.HasPrefix(v, `"`) {
		if s, err := strconv.QuotedPrefix(v); err == nil {
			u, _ := strconv.Unquote(s)
			return u
		}
	}
	v, _, _ = strings.Cut(v, " ")
	return v
}
