package rules

import (
	"fmt"
	pathpkg "path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/kilnhq/kiln/manifest"
)

// Config is what the engine and discovery read of a run's settings (package
// settings decodes them): which rules are on and at what severity, the files
// excluded, and how Helm charts are rendered.
//
//	rules:
//	  psa/runAsNonRoot: warning   # error | warning | info | off | on
//	  "sidecar/*": off
//	exclude: ["vendor/**", "charts/*/tests/**"]
type Config struct {
	// Path is the file the config was read from ("" for none).
	Path    string
	Rules   map[string]string
	Exclude []string
	// Helm is how charts are rendered: defaults, and per chart directory
	// (relative to the config's directory) in Charts.
	Helm HelmConfig

	excludeRE []*regexp.Regexp
	// ruleAt is where each rules entry is written, for CheckRules.
	ruleAt map[string]manifest.Position
}

// HelmConfig is how charts are rendered: the helm: block of .kiln.yaml
// and the Helm flags.
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
	// Charts are per chart directory (relative to the config's directory).
	Charts map[string]HelmChart
	// Given are the settings given outside the config (flags): they
	// apply after a chart's own.
	Given HelmChart
}

// HelmChart are the Helm settings of one chart (or the defaults of all).
// Values file paths are as the file system finds them (those of the
// config resolved against its directory).
type HelmChart struct {
	ReleaseName, Namespace string
	Values, Set            []string
}

// ChartSettings returns the settings of the chart in dir: the defaults,
// then the chart's own entry, then the given ones (values and sets added,
// names replaced).
func (c *Config) ChartSettings(dir string) HelmChart {
	out := HelmChart{}
	add := func(h HelmChart) {
		out.Values = append(out.Values, h.Values...)
		out.Set = append(out.Set, h.Set...)
		if h.ReleaseName != "" {
			out.ReleaseName = h.ReleaseName
		}
		if h.Namespace != "" {
			out.Namespace = h.Namespace
		}
	}
	add(c.Helm.HelmChart)
	keys := make([]string, 0, len(c.Helm.Charts))
	for key := range c.Helm.Charts {
		keys = append(keys, key)
	}
	sort.Strings(keys)
	for _, key := range keys {
		if c.sameDir(key, dir) {
			add(c.Helm.Charts[key])
		}
	}
	add(c.Helm.Given)
	return out
}

// ChartSetting names where the settings of the chart in dir are written:
// "helm.charts.<dir>", dir as the config file's directory sees it (as the
// current directory does when there is no config file); "helm" for a
// chart in that directory itself, whose settings are helm's own.
func (c *Config) ChartSetting(dir string) string {
	key := filepath.Clean(dir)
	if c.Path != "" {
		if rel, err := filepath.Rel(absOr(filepath.Dir(c.Path)), absOr(dir)); err == nil {
			key = rel
		}
	}
	if key == "." {
		return "helm"
	}
	key = filepath.ToSlash(key)
	if strings.HasPrefix(key, ".") || strings.ContainsAny(key, " :") {
		return "helm.charts[" + strconv.Quote(key) + "]" // "helm.charts.../x" would read as nonsense
	}
	return "helm.charts." + key
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
		if !MatchRule(pat, id) {
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

// NewConfig returns the config of rule settings (patterns to settings,
// with where each is written), exclude globs (checked with CheckGlob) and
// Helm settings read from the config file at path ("" for none).
func NewConfig(path string, ruleSettings map[string]string, ruleAt map[string]manifest.Position, exclude []string, helm HelmConfig) *Config {
	c := &Config{Path: path, Rules: ruleSettings, ruleAt: ruleAt, Exclude: exclude, Helm: helm}
	if c.Rules == nil {
		c.Rules = map[string]string{}
	}
	for _, g := range exclude {
		c.excludeRE = append(c.excludeRE, globRE(g))
	}
	return c
}

// CheckGlob reports whether an exclude glob is one kiln reads.
func CheckGlob(g string) error {
	if _, err := pathpkg.Match(g, ""); err != nil {
		return err
	}
	if strings.ContainsAny(g, "[]{}") {
		return fmt.Errorf("character classes and alternatives are not supported")
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
