package session

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/kilnhq/kiln/admit/vapcompat"
	"github.com/kilnhq/kiln/session/settings"

	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules"
	"github.com/kilnhq/kiln/rules/cel"
	"github.com/kilnhq/kiln/rules/checkers"
	"github.com/kilnhq/kiln/rules/policies"
	"github.com/kilnhq/kiln/session/fix"
)

// Rules returns every rule kiln can report, sorted by ID: the registered
// checkers' rules and the engine's kiln/unused-ignore; with paths, also a
// rule per ValidatingAdmissionPolicy they hold as kiln lint reads them
// (the config nearest them, its excludes, kustomizations and charts
// rendered), and per policy a binding there names, for kiln rules and
// kiln explain.
func Rules(paths []string, stdin io.Reader) ([]*rules.Rule, error) {
	all := append(checkers.Rules(), rules.UnusedIgnoreRule)
	if len(paths) > 0 {
		s, err := New(settings.New(), paths, stdin)
		if err != nil {
			return nil, err
		}
		in, err := s.read(paths, readOptions{})
		if err != nil {
			return nil, err
		}
		if errs := in.set.Errors(); len(errs) > 0 {
			manifest.SortErrors(errs)
			return nil, errors.Join(errs...)
		}
		all = append(all, cel.PolicyRules(in.set.Objects())...)
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].ID < all[j].ID })
	return all, nil
}

// Rule returns the rule with the ID among Rules(paths, stdin) (the last, should
// a policy there take the ID of another).
func Rule(id string, paths []string, stdin io.Reader) (*rules.Rule, error) {
	all, err := Rules(paths, stdin)
	if err != nil {
		return nil, err
	}
	var found *rules.Rule
	for _, r := range all {
		if r.ID == id {
			found = r
		}
	}
	if found == nil {
		return nil, fmt.Errorf("unknown rule %q; `kiln rules` lists them", id)
	}
	return found, nil
}

// CheckFixFlags refuses a --run-as-user of kiln fix that is root (0, when
// given) or negative, and a --rule pattern that matches no rule kiln fix
// repairs.
func CheckFixFlags(patterns []string, runAsUser int64, userGiven bool) error {
	if runAsUser < 0 || userGiven && runAsUser == 0 {
		return fmt.Errorf("--run-as-user %d: use a non-root user ID (1 or more)", runAsUser)
	}
	for _, p := range patterns {
		if !fix.MatchesAnyRule(p, checkers.Fixable()) {
			return fmt.Errorf("--rule %q matches no rule kiln fix repairs; use one of %s", p, strings.Join(checkers.Fixable(), ", "))
		}
	}
	return nil
}

// ExportOptions are kiln policies export's settings, as the user gave them.
type ExportOptions struct {
	// Actions are the bindings' validationActions.
	Actions []string
	// NamespaceSelector is a label selector for the bindings ("" for all).
	NamespaceSelector string
	// KubeVersion is the version the rules judge against ("" for the newest).
	KubeVersion string
}

// ExportPolicies returns kiln's single-object rules as the
// ValidatingAdmissionPolicies and bindings kiln lint runs, for a cluster.
func ExportPolicies(o ExportOptions) ([]byte, error) {
	opts := policies.ExportOptions{KubeVersion: manifest.LatestKube}
	var err error
	if opts.Actions, err = policies.ParseActions(o.Actions); err != nil {
		return nil, fmt.Errorf("--action: %v", err)
	}
	if o.NamespaceSelector != "" {
		if opts.NamespaceSelector, err = policies.ParseNamespaceSelector(o.NamespaceSelector); err != nil {
			return nil, fmt.Errorf("--namespace-selector %q: %v", o.NamespaceSelector, err)
		}
	}
	if o.KubeVersion != "" {
		v, err := manifest.ParseKubeVersion(o.KubeVersion)
		if err != nil {
			return nil, fmt.Errorf("--kube-version: %v", err)
		}
		if v.Less(manifest.OldestKube) || manifest.LatestKube.Less(v) {
			return nil, fmt.Errorf("--kube-version %s is outside the range kiln knows (%s to %s)", v, manifest.OldestKube, manifest.LatestKube)
		}
		opts.KubeVersion = v
	}
	var objs []*manifest.Object
	for _, p := range policies.All() {
		objs = append(objs, p.Object)
	}
	if err := vapcompat.Refuse(opts.KubeVersion, objs); err != nil {
		return nil, fmt.Errorf("--kube-version %s: %v", opts.KubeVersion, err)
	}
	return policies.Export(opts)
}
