package rules

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/kilnhq/kiln/internal/editdist"
	"github.com/kilnhq/kiln/manifest"
)

// Config is what the engine reads of a run's rules settings (package
// settings decodes them): which rules are on and at what severity.
//
//	rules:
//	  psa/runAsNonRoot: warning   # error | warning | info | off | on
//	  "sidecar/*": off
type Config struct {
	Rules map[string]string
	// ruleAt is where each rules entry is written, for CheckRules.
	ruleAt map[string]manifest.Position
	// offByDefault are the rules of the run's checkers that are off unless
	// Rules turns them on (Rule.Off): see WithCheckers.
	offByDefault map[string]bool
}

// WithCheckers returns the config as it applies to a run of these
// checkers: their rules that are off by default (Rule.Off) are off unless
// Rules names them.
func (c *Config) WithCheckers(checkers []*Checker) *Config {
	out := *c
	out.offByDefault = map[string]bool{}
	for _, ch := range checkers {
		for _, r := range append(append([]*Rule(nil), ch.Rules...), ch.Declares...) {
			if r.Off {
				out.offByDefault[r.ID] = true
			}
		}
	}
	return &out
}

type ruleSetting struct {
	off      bool
	severity Severity
}

// setting returns the configured setting for a rule: an exact ID beats a
// pattern, a longer pattern beats a shorter one; a rule the config does
// not name is on, but a rule that is off by default (Rule.Off).
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
		return ruleSetting{off: c.offByDefault[id]}
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

// NewConfig returns the config of rule settings: patterns to settings,
// with where each is written.
func NewConfig(ruleSettings map[string]string, ruleAt map[string]manifest.Position) *Config {
	c := &Config{Rules: ruleSettings, ruleAt: ruleAt}
	if c.Rules == nil {
		c.Rules = map[string]string{}
	}
	return c
}

// CheckRules reports, each at its line, the rules entries that name no
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
	var errs []error
	for _, p := range slices.Sorted(maps.Keys(c.Rules)) {
		pos := c.ruleAt[p]
		family, _, _ := strings.Cut(strings.TrimSuffix(p, "*"), "/")
		if p == "*" {
			continue
		}
		if !families[family] {
			msg := fmt.Sprintf("rules: unknown rule family %q in %q", family, p)
			if near := nearest(family, families); near != "" {
				msg += fmt.Sprintf("; did you mean %q?", near)
			}
			errs = append(errs, &manifest.Error{Pos: pos, Msg: msg + " (known: " + strings.Join(slices.Sorted(maps.Keys(families)), ", ") + ")"})
			continue
		}
		if strings.HasSuffix(p, "*") || family == "policy" || ids[p] {
			continue
		}
		msg := fmt.Sprintf("rules: unknown rule %q", p)
		if near := nearest(p, ids); near != "" {
			msg += fmt.Sprintf("; did you mean %q?", near)
		}
		errs = append(errs, &manifest.Error{Pos: pos, Msg: msg + " (kiln rules lists them)"})
	}
	manifest.SortErrors(errs)
	return errors.Join(errs...)
}

// nearest returns the known ID closest to id in edit distance, if close.
func nearest(id string, ids map[string]bool) string {
	best, bestD := "", len(id)/3+2
	for _, k := range slices.Sorted(maps.Keys(ids)) {
		if d := editdist.Distance(id, k); d < bestD {
			best, bestD = k, d
		}
	}
	return best
}
