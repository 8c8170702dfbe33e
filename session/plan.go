package session

import (
	"errors"
	"fmt"
	"io"

	"github.com/kilnhq/kiln/admit/mutate"
	"github.com/kilnhq/kiln/admit/stage"
	"github.com/kilnhq/kiln/compiler"
	"github.com/kilnhq/kiln/lint"
	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules"
	"github.com/kilnhq/kiln/rules/checkers"
	"github.com/kilnhq/kiln/rules/psa"
)

// Planned is a Pod Security plan and the input problems met making it.
type Planned struct {
	Plan *psa.Plan
	// InputErrors are the inputs that could not be read or compiled: the
	// plan leaves them out, and the run fails.
	InputErrors []error
}

// PlanPSA is kiln psa plan: it reads what the paths hold as kiln lint does
// (kustomizations and charts rendered, App specs compiled) and plans the
// Pod Security labels of every namespace. Without a Kubernetes version in
// the settings, the plan is for the oldest spec.target.kubernetes among
// the App specs.
func (s *Session) PlanPSA(paths []string) (*Planned, error) {
	set, objs, inputErrs := s.readAll(paths)
	opts := *s.Options
	if s.Settings.KubeVersion == "" {
		if v, ok := specTarget(set.Objects()); ok {
			opts.KubeVersion = v
		}
	}
	if mutates(objs) || len(opts.Policies) > 0 {
		// Mutating admission changes what Pod Security judges: the plan
		// reads the objects as the admission stage leaves them.
		given, errs := lint.NewGiven(&opts).Objects(rules.Policies)
		if len(errs) > 0 {
			manifest.SortErrors(errs)
			return nil, fmt.Errorf("--policy: %w", errors.Join(errs...))
		}
		stage.AdmitAll(objs, given, stage.Options{KubeVersion: opts.KubeVersion, User: opts.User, Groups: opts.Groups, Authorizer: opts.Authorizer, ServiceCIDRs: opts.ServiceCIDRs})
	}
	plan, err := psa.NewPlanWith(objs, opts.KubeVersion, psa.PlanOptions{Fixable: checkers.IsFixable, Options: &opts})
	if err != nil {
		return nil, err
	}
	return &Planned{Plan: plan, InputErrors: inputErrs}, nil
}

// Write writes the plan in format (text or json) and returns the input
// problems met making it, as the error the run ends with.
func (p *Planned) Write(w io.Writer, format string) error {
	if err := p.Plan.Write(w, format); err != nil {
		return err
	}
	return inputErrors(p.InputErrors)
}

// readAll reads everything the paths hold into memory, as a lint reads it:
// the files discovered, the kustomizations and charts rendered, and the
// App specs compiled (objs). inputErrs are every read and spec problem.
func (s *Session) readAll(paths []string) (set *manifest.Set, objs []*manifest.Object, inputErrs []error) {
	found := s.discover(paths, nil)
	set = manifest.ReadFiles(found.Files, s.Stdin)
	set.Errs = append(found.Errs, set.Errs...)
	for _, u := range found.Units {
		set.Sources = append(set.Sources, u.Source)
	}
	set.DropSources() // the rules need positions and content, not YAML trees
	x := compiler.Expand(set.Objects())
	return set, x.All, append(set.Errors(), x.Errors...)
}

// specTarget returns the oldest spec.target.kubernetes of the App specs
// among objs, if any names one.
func specTarget(objs []*manifest.Object) (manifest.KubeVersion, bool) {
	var oldest manifest.KubeVersion
	found := false
	for _, o := range objs {
		if !compiler.IsSpec(o) {
			continue
		}
		content, err := o.Content()
		if err != nil {
			continue
		}
		spec, _ := content["spec"].(map[string]any)
		target, _ := spec["target"].(map[string]any)
		str, _ := target["kubernetes"].(string)
		v, err := manifest.ParseKubeVersion(str)
		if err != nil {
			continue
		}
		if !found || v.Less(oldest) {
			oldest, found = v, true
		}
	}
	return oldest, found
}

// mutates reports whether objs hold a MutatingAdmissionPolicy.
func mutates(objs []*manifest.Object) bool {
	for _, o := range objs {
		if mutate.IsPolicyObject(o) {
			return true
		}
	}
	return false
}
