package rules

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	pathpkg "path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/kilnhq/kiln/manifest"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// ConfigFile is the name of the config file kiln looks for in the current directory.
const ConfigFile = ".kiln.yaml"

// Config is the content of .kiln.yaml.
//
//	kubeVersion: "1.31"
//	psa: {level: baseline, version: v1.30}
//	rules:
//	  psa/runAsNonRoot: warning   # error | warning | info | off | on
//	  "sidecar/*": off
//	exclude: ["vendor/**", "charts/*/tests/**"]
//	policies: [policies/]
//	storageClasses: cluster/storageclasses.yaml
type Config struct {
	// Path is the file the config was read from ("" for none).
	Path           string
	KubeVersion    string
	PSALevel       string
	PSAVersion     string
	Rules          map[string]string
	Exclude        []string
	Policies       []string
	StorageClasses string
	// Helm is how charts are rendered: defaults, and per chart directory
	// (relative to the config's directory) in Charts.
	Helm HelmConfig

	excludeRE []*regexp.Regexp
	// ruleAt is where each rules entry is written, for CheckRules.
	ruleAt map[string]manifest.Position
}

// HelmConfig is the helm: block of .kiln.yaml.
//
//	helm:
//	  releaseName: shop        # default release-name
//	  namespace: shop          # default default
//	  values: [ci/values.yaml] # over each chart's values.yaml
//	  set: [image.tag=1.2.3]
//	  charts:
//	    charts/app: {values: [charts/app/prod.yaml], set: [replicas=3]}
type HelmConfig struct {
	HelmChart
	Charts map[string]HelmChart
}

// HelmChart are the Helm settings of one chart (or the defaults of all).
// Values file paths are relative to the config's directory.
type HelmChart struct {
	ReleaseName, Namespace string
	Values, Set            []string
}

// ChartSettings returns the settings of the chart in dir: the defaults,
// then the chart's own entry (values and sets added, names replaced).
func (c *Config) ChartSettings(dir string) HelmChart {
	out := HelmChart{ReleaseName: c.Helm.ReleaseName, Namespace: c.Helm.Namespace}
	out.Values = append(out.Values, c.relative(c.Helm.Values)...)
	out.Set = append(out.Set, c.Helm.Set...)
	for key, ch := range c.Helm.Charts {
		if !c.sameDir(key, dir) {
			continue
		}
		out.Values = append(out.Values, c.relative(ch.Values)...)
		out.Set = append(out.Set, ch.Set...)
		if ch.ReleaseName != "" {
			out.ReleaseName = ch.ReleaseName
		}
		if ch.Namespace != "" {
			out.Namespace = ch.Namespace
		}
	}
	return out
}

// relative resolves paths written in the config against its directory.
func (c *Config) relative(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		if c.Path != "" && !filepath.IsAbs(p) {
			p = filepath.Join(filepath.Dir(c.Path), p)
		}
		out[i] = p
	}
	return out
}

func (c *Config) sameDir(key, dir string) bool {
	return absOr(c.relative([]string{key})[0]) == absOr(dir)
}

type ruleSetting struct {
	off      bool
	severity Severity
}

// setting returns the configured setting for a rule: an exact ID beats a
// pattern, a longer pattern beats a shorter one.
func (c *Config) setting(id string) ruleSetting {
	best, bestLen := "", -1
	for pat := range c.Rules {
		if !matchRule(pat, id) {
			continue
		}
		l := len(pat)
		if pat == id {
			l = 1 << 30
		}
		if l > bestLen || (l == bestLen && pat < best) {
			best, bestLen = pat, l
		}
	}
	if bestLen < 0 {
		return ruleSetting{}
	}
	switch v := strings.ToLower(c.Rules[best]); v {
	case "off", "false", "disabled":
		return ruleSetting{off: true}
	case "on", "true", "enabled", "":
		return ruleSetting{}
	default:
		sev, _ := ParseSeverity(v)
		return ruleSetting{severity: sev}
	}
}

// Enabled reports whether the config leaves a rule on.
func (c *Config) Enabled(id string) bool { return !c.setting(id).off }

func (c *Config) anyEnabled(rs []*Rule) bool {
	if len(rs) == 0 {
		return true
	}
	for _, r := range rs {
		if c.Enabled(r.ID) {
			return true
		}
	}
	return false
}

// Excluded reports whether a file path matches an exclude pattern. Patterns
// are globs over slash-separated paths relative to the config's directory
// (the current directory without a config): `*` stays within a path segment,
// `**` crosses segments, and a pattern naming a directory excludes what is under it.
func (c *Config) Excluded(path string) bool {
	if len(c.excludeRE) == 0 {
		return false
	}
	p := filepath.ToSlash(filepath.Clean(path))
	if c.Path != "" {
		if abs, err := filepath.Abs(path); err == nil {
			if rel, err := filepath.Rel(filepath.Dir(absOr(c.Path)), abs); err == nil && !strings.HasPrefix(rel, "..") {
				p = filepath.ToSlash(rel)
			}
		}
	}
	for _, re := range c.excludeRE {
		if re.MatchString(p) {
			return true
		}
	}
	return false
}

func absOr(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

// globRE compiles an exclude glob.
func globRE(glob string) *regexp.Regexp {
	g := strings.TrimPrefix(filepath.ToSlash(glob), "./")
	g = strings.TrimSuffix(g, "/")
	var b strings.Builder
	b.WriteString("^")
	for i := 0; i < len(g); i++ {
		switch c := g[i]; c {
		case '*':
			if i+1 < len(g) && g[i+1] == '*' {
				i++
				if i+1 < len(g) && g[i+1] == '/' {
					i++
					b.WriteString("(?:.*/)?")
				} else {
					b.WriteString(".*")
				}
			} else {
				b.WriteString("[^/]*")
			}
		case '?':
			b.WriteString("[^/]")
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString("(?:/.*)?$")
	return regexp.MustCompile(b.String())
}

// LoadConfig reads a config file. With explicit false, a missing file is
// not an error (the default .kiln.yaml is optional).
func LoadConfig(path string, explicit bool) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		if !explicit && errors.Is(err, os.ErrNotExist) {
			return &Config{}, nil
		}
		return nil, &manifest.Error{Pos: manifest.Position{File: path}, Msg: "cannot read config: " + err.Error()}
	}
	return ParseConfig(path, data)
}

// ParseConfig parses .kiln.yaml content. Unknown keys and bad values are
// errors with file:line:col.
func ParseConfig(path string, data []byte) (*Config, error) {
	c := &Config{Path: path, Rules: map[string]string{}, ruleAt: map[string]manifest.Position{}}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return c, nil
		}
		return nil, &manifest.Error{Pos: manifest.Position{File: path, Line: 1, Column: 1}, Msg: "invalid YAML in config: " + err.Error()}
	}
	errAt := func(n *yaml.Node, format string, args ...any) error {
		return &manifest.Error{Pos: manifest.Position{File: path, Line: n.Line, Column: n.Column}, Msg: fmt.Sprintf(format, args...)}
	}
	var second yaml.Node
	if err := dec.Decode(&second); err == nil && len(second.Content) > 0 && second.Content[0].ShortTag() != "!!null" {
		return nil, errAt(second.Content[0], "a second YAML document in the config: %s holds one mapping; remove the --- and merge the settings", ConfigFile)
	}
	if len(doc.Content) == 0 {
		return c, nil
	}
	root := doc.Content[0]
	if err := noDuplicateKeys(root, errAt); err != nil {
		return nil, err
	}
	if root.Kind != yaml.MappingNode {
		return nil, errAt(root, "config must be a mapping (keys: kubeVersion, psa, rules, exclude, policies, storageClasses)")
	}
	str := func(n *yaml.Node, what string) (string, error) {
		if n.Kind != yaml.ScalarNode {
			return "", errAt(n, "%s must be a string", what)
		}
		return n.Value, nil
	}
	strs := func(n *yaml.Node, what string) ([]string, error) {
		if n.Kind != yaml.SequenceNode {
			return nil, errAt(n, "%s must be a list of strings", what)
		}
		var out []string
		for _, it := range n.Content {
			s, err := str(it, what+" entry")
			if err != nil {
				return nil, err
			}
			out = append(out, s)
		}
		return out, nil
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		var err error
		switch k.Value {
		case "kubeVersion":
			if c.KubeVersion, err = str(v, "kubeVersion"); err == nil {
				if _, perr := manifest.ParseKubeVersion(c.KubeVersion); perr != nil {
					err = errAt(v, "%v", perr)
				}
			}
		case "psa":
			if v.Kind != yaml.MappingNode {
				err = errAt(v, "psa must be a mapping with level and version")
				break
			}
			for j := 0; j+1 < len(v.Content) && err == nil; j += 2 {
				pk, pv := v.Content[j], v.Content[j+1]
				switch pk.Value {
				case "level":
					if c.PSALevel, err = str(pv, "psa.level"); err == nil {
						switch c.PSALevel {
						case "privileged", "baseline", "restricted":
						default:
							err = errAt(pv, "psa.level %q is not a Pod Security level: use privileged, baseline or restricted", c.PSALevel)
						}
					}
				case "version":
					c.PSAVersion, err = str(pv, "psa.version")
				default:
					err = errAt(pk, "unknown key psa.%s (known: level, version)", pk.Value)
				}
			}
		case "rules":
			if v.Kind != yaml.MappingNode {
				err = errAt(v, "rules must map rule IDs (or patterns like psa/*) to error, warning, info, on or off")
				break
			}
			for j := 0; j+1 < len(v.Content) && err == nil; j += 2 {
				rk, rv := v.Content[j], v.Content[j+1]
				var s string
				if s, err = str(rv, "rules."+rk.Value); err != nil {
					break
				}
				switch strings.ToLower(s) {
				case "off", "on", "true", "false", "enabled", "disabled", "error", "warning", "warn", "info":
					c.Rules[rk.Value] = s
					c.ruleAt[rk.Value] = manifest.Position{File: path, Line: rk.Line, Column: rk.Column}
				default:
					err = errAt(rv, "rules.%s: %q is not a setting: use error, warning, info, on or off", rk.Value, s)
				}
			}
		case "exclude":
			if c.Exclude, err = strs(v, "exclude"); err == nil {
				for i, g := range c.Exclude {
					if _, perr := pathpkg.Match(g, ""); perr != nil || strings.ContainsAny(g, "[]{}") {
						err = errAt(v.Content[i], "exclude %q is not a glob kiln reads: use * (within a path segment), ** (across segments) and ?", g)
						break
					}
					c.excludeRE = append(c.excludeRE, globRE(g))
				}
			}
		case "policies":
			c.Policies, err = strs(v, "policies")
		case "storageClasses":
			c.StorageClasses, err = str(v, "storageClasses")
		case "helm":
			err = parseHelm(v, &c.Helm, errAt, str, strs)
		default:
			err = errAt(k, "unknown config key %q (known: kubeVersion, psa, rules, exclude, policies, storageClasses, helm)", k.Value)
		}
		if err != nil {
			return nil, err
		}
	}
	return c, nil
}

// parseHelm reads the helm: block.
func parseHelm(v *yaml.Node, h *HelmConfig, errAt func(*yaml.Node, string, ...any) error,
	str func(*yaml.Node, string) (string, error), strs func(*yaml.Node, string) ([]string, error)) error {
	var chart func(v *yaml.Node, what string, out *HelmChart, allowCharts bool) error
	chart = func(v *yaml.Node, what string, out *HelmChart, allowCharts bool) error {
		if v.Kind != yaml.MappingNode {
			return errAt(v, "%s must be a mapping (keys: releaseName, namespace, values, set)", what)
		}
		var err error
		for j := 0; j+1 < len(v.Content) && err == nil; j += 2 {
			k, x := v.Content[j], v.Content[j+1]
			switch k.Value {
			case "releaseName":
				out.ReleaseName, err = str(x, what+".releaseName")
			case "namespace":
				out.Namespace, err = str(x, what+".namespace")
			case "values":
				out.Values, err = strs(x, what+".values")
			case "set":
				out.Set, err = strs(x, what+".set")
			case "charts":
				if !allowCharts || x.Kind != yaml.MappingNode {
					return errAt(k, "%s.charts must map chart directories to their settings", what)
				}
				h.Charts = map[string]HelmChart{}
				for i := 0; i+1 < len(x.Content) && err == nil; i += 2 {
					var c HelmChart
					err = chart(x.Content[i+1], what+".charts."+x.Content[i].Value, &c, false)
					h.Charts[x.Content[i].Value] = c
				}
			default:
				return errAt(k, "unknown key %s.%s (known: releaseName, namespace, values, set, charts)", what, k.Value)
			}
		}
		return err
	}
	return chart(v, "helm", &h.HelmChart, true)
}

// noDuplicateKeys reports the first mapping key written twice, anywhere in n.
func noDuplicateKeys(n *yaml.Node, errAt func(*yaml.Node, string, ...any) error) error {
	if n.Kind == yaml.MappingNode {
		seen := map[string]*yaml.Node{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if first, dup := seen[k.Value]; dup {
				return errAt(k, "duplicate key %q (first at line %d); keep one", k.Value, first.Line)
			}
			seen[k.Value] = k
		}
	}
	for _, c := range n.Content {
		if err := noDuplicateKeys(c, errAt); err != nil {
			return err
		}
	}
	return nil
}

// CheckRules reports, at its line, the first rules entry that names no
// known family or no known rule (user policies' policy/<name> rules are
// checked by family only: they are known once the policies are read).
func (c *Config) CheckRules(known []*Rule) error {
	families := map[string]bool{}
	ids := map[string]bool{}
	for _, r := range known {
		ids[r.ID] = true
		if f, _, ok := strings.Cut(r.ID, "/"); ok {
			families[f] = true
		}
	}
	families["policy"] = true
	pats := make([]string, 0, len(c.Rules))
	for p := range c.Rules {
		pats = append(pats, p)
	}
	sort.Strings(pats)
	for _, p := range pats {
		pos := c.ruleAt[p]
		family, _, _ := strings.Cut(strings.TrimSuffix(p, "*"), "/")
		if p == "*" {
			continue
		}
		if !families[family] {
			return &manifest.Error{Pos: pos, Msg: fmt.Sprintf("rules: unknown rule family %q in %q (known: %s)", family, p, strings.Join(sortedKeys(families), ", "))}
		}
		if strings.HasSuffix(p, "*") || family == "policy" || ids[p] {
			continue
		}
		msg := fmt.Sprintf("rules: unknown rule %q", p)
		if near := nearest(p, ids); near != "" {
			msg += fmt.Sprintf("; did you mean %q?", near)
		}
		return &manifest.Error{Pos: pos, Msg: msg + " (kiln rules lists them)"}
	}
	return nil
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// nearest returns the known ID closest to id in edit distance, if close.
func nearest(id string, ids map[string]bool) string {
	best, bestD := "", len(id)/3+2
	for _, k := range sortedKeys(ids) {
		if d := editDistance(id, k); d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// RuleSettings returns the configured rule settings sorted by pattern (for display).
func (c *Config) RuleSettings() [][2]string {
	var out [][2]string
	for k, v := range c.Rules {
		out = append(out, [2]string{k, v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	return out
}
