package rules

import (
	"errors"
	"fmt"
	"os"
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

	excludeRE []*regexp.Regexp
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
	c := &Config{Path: path, Rules: map[string]string{}}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, &manifest.Error{Pos: manifest.Position{File: path, Line: 1, Column: 1}, Msg: "invalid YAML in config: " + err.Error()}
	}
	if len(doc.Content) == 0 {
		return c, nil
	}
	root := doc.Content[0]
	errAt := func(n *yaml.Node, format string, args ...any) error {
		return &manifest.Error{Pos: manifest.Position{File: path, Line: n.Line, Column: n.Column}, Msg: fmt.Sprintf(format, args...)}
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
				default:
					err = errAt(rv, "rules.%s: %q is not a setting: use error, warning, info, on or off", rk.Value, s)
				}
			}
		case "exclude":
			if c.Exclude, err = strs(v, "exclude"); err == nil {
				for _, g := range c.Exclude {
					c.excludeRE = append(c.excludeRE, globRE(g))
				}
			}
		case "policies":
			c.Policies, err = strs(v, "policies")
		case "storageClasses":
			c.StorageClasses, err = str(v, "storageClasses")
		default:
			err = errAt(k, "unknown config key %q (known: kubeVersion, psa, rules, exclude, policies, storageClasses)", k.Value)
		}
		if err != nil {
			return nil, err
		}
	}
	return c, nil
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
