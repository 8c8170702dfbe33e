package settings

import (
	"errors"
	"os"
	"path/filepath"

	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules"
	"github.com/kilnhq/kiln/rules/checkers"
)

// Load returns the settings of a run over paths: the config file (the one
// named by a config setting, else the nearest .kiln.yaml above the paths)
// first, then every other source's assignments in the order given. Paths
// whose nearest .kiln.yaml differ are an error: one run has one config.
func (s *Settings) Load(paths []string) (*Settings, error) {
	out := New()
	var fileErr error // the config file's mistakes, all of them, with its rules' below
	if s.Config != "" {
		fileErr = out.loadFile(s.Config, true)
	} else {
		path, err := Nearest(paths)
		if err != nil {
			return nil, err
		}
		if path != "" {
			fileErr = out.loadFile(path, false)
		}
	}
	for _, a := range s.given {
		if err := out.Apply(a); err != nil {
			return nil, errors.Join(fileErr, err)
		}
	}
	if err := errors.Join(fileErr, out.RuleConfig().CheckRules(checkers.Rules())); err != nil {
		return nil, err
	}
	return out, nil
}

// Nearest returns the .kiln.yaml nearest above each path (as golangci-lint
// and editorconfig find theirs), up to the Git repository's root, relative
// to the current directory where it can be; "" when there is none. Paths
// with different nearest configs are an error naming both.
func Nearest(paths []string) (string, error) {
	if len(paths) == 0 {
		paths = []string{"."}
	}
	found, from := "", ""
	for i, p := range paths {
		if p == manifest.Stdin {
			p = "."
		}
		c := nearestOne(p)
		if i > 0 && c != found {
			return "", &Error{From: p, Msg: "its nearest " + FileName + " is " + orNone(c) + ", but " + from + "'s is " + orNone(found) +
				": lint them in separate runs, or name one config with --config"}
		}
		found, from = c, p
	}
	return found, nil
}

func orNone(c string) string {
	if c == "" {
		return "none"
	}
	return c
}

func nearestOne(path string) string {
	dir, err := filepath.Abs(path)
	if err != nil {
		return ""
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		dir = filepath.Dir(dir)
	}
	wd, _ := os.Getwd()
	for {
		c := filepath.Join(dir, FileName)
		if fi, err := os.Stat(c); err == nil && !fi.IsDir() {
			if rel, err := filepath.Rel(wd, c); err == nil && wd != "" {
				return rel
			}
			return c
		}
		if _, err := os.Stat(filepath.Join(dir, ".git")); err == nil || filepath.Dir(dir) == dir {
			// None up to the repository's root: the current directory's.
			if fi, err := os.Stat(FileName); err == nil && !fi.IsDir() {
				return FileName
			}
			return ""
		}
		dir = filepath.Dir(dir)
	}
}

// RuleConfig returns the rules settings (which rules are on, at what
// severity) as the engine reads them.
func (s *Settings) RuleConfig() *rules.Config {
	return rules.NewConfig(s.Rules, s.ruleAt)
}

// Options returns the engine's options: the defaults, then the settings.
func (s *Settings) Options() *rules.Options {
	o := rules.DefaultOptions()
	if s.KubeVersion != "" {
		o.KubeVersion, _ = manifest.ParseKubeVersion(s.KubeVersion)
	}
	if s.PSALevel != "" {
		o.PSALevel = s.PSALevel
	}
	if s.PSAVersion != "" {
		o.PSAVersion = s.PSAVersion
	}
	o.PSANamespaces = s.psaNamespaces()
	o.Policies = append([]string(nil), s.Policies...)
	if s.As != "" {
		o.User = s.As
	}
	if len(s.AsGroups) > 0 {
		o.Groups = s.AsGroups
	}
	if s.Authorizer != "" {
		o.Authorizer = s.Authorizer
	}
	o.StorageClasses = s.StorageClasses
	o.ServiceCIDRs = append([]string(nil), s.ServiceCIDRs...)
	o.CRDs = append([]string(nil), s.CRDs...)
	o.CatalogOff, o.CatalogVersions = s.CatalogOff, s.CatalogVersions
	return o
}

// Threshold is the lowest severity that fails the run (0: none).
func (s *Settings) Threshold() rules.Severity {
	t, _ := ParseFailOn(s.FailOn)
	return t
}
