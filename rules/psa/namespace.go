package psa

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/kilnhq/kiln/rules"
	"k8s.io/pod-security-admission/api"
)

// clusterDefaults is the policy of a namespace without Pod Security labels in
// a cluster with the default admission configuration: every mode privileged.
var clusterDefaults = api.Policy{
	Enforce: api.LevelVersion{Level: api.LevelPrivileged, Version: api.LatestVersion()},
	Audit:   api.LevelVersion{Level: api.LevelPrivileged, Version: api.LatestVersion()},
	Warn:    api.LevelVersion{Level: api.LevelPrivileged, Version: api.LatestVersion()},
}

// namespaceModes resolves the Pod Security policy of every Namespace in the
// input with upstream's api.PolicyToEvaluate, reporting labels it cannot
// parse: the PodSecurity admission plugin refuses such a Namespace on create
// and update. kiln still judges its pods the way upstream evaluates a
// namespace that already carries such a label (it exists from before the
// plugin was on), with what PolicyToEvaluate returned alongside the error:
// an invalid enforce level or any invalid version means restricted / latest,
// an invalid warn or audit level means privileged.
func namespaceModes(pass *rules.Pass) map[string][]mode {
	out := map[string][]mode{}
	same := map[string][]mode{} // Namespaces of one policy share its modes
	for _, o := range pass.Objects {
		if o.Kind != "Namespace" || o.Group() != "" || o.Name == "" {
			continue
		}
		if _, dup := out[o.Name]; dup {
			continue // the first definition wins; duplicates are another rule's business
		}
		p, errs := api.PolicyToEvaluate(o.Labels, clusterDefaults)
		sort.SliceStable(errs, func(i, j int) bool { return errs[i].Field < errs[j].Field })
		for _, e := range errs {
			label := labelOf(e.Field)
			pass.Report(rules.Diagnostic{
				Rule:   InvalidLabelRule,
				Object: o,
				Field:  "metadata.labels[" + strconv.Quote(label) + "]",
				Message: fmt.Sprintf("label %s has invalid value %q: %s; the API server refuses the Namespace (Pod Security admission validates these labels on create and update; one that already carries it is evaluated with %s)",
					label, o.Labels[label], e.Detail, fallbackNote(label)),
			})
		}
		modes := activeModes(p)
		key := modesKey(modes)
		if m, ok := same[key]; ok {
			modes = m
		} else {
			same[key] = modes
		}
		out[o.Name] = modes
	}
	return out
}

// modesKey identifies a list of modes.
func modesKey(modes []mode) string {
	var b strings.Builder
	for _, m := range modes {
		fmt.Fprintf(&b, "%s@%s/%d;", m.lv.Level, m.lv.Version, m.severity)
	}
	return b.String()
}

// labelOf extracts the label key from a field path "metadata.labels[key]".
func labelOf(field string) string {
	if i := strings.IndexByte(field, '['); i >= 0 && strings.HasSuffix(field, "]") {
		return field[i+1 : len(field)-1]
	}
	return field
}

// fallbackNote says what upstream's PolicyToEvaluate uses in place of an invalid label value.
func fallbackNote(label string) string {
	switch label {
	case api.EnforceLevelLabel:
		return "enforce as restricted"
	case api.WarnLevelLabel:
		return "warn as privileged (not at all)"
	case api.AuditLevelLabel:
		return "audit as privileged (not at all)"
	}
	return "this mode at version latest"
}

// systemNamespaces are the namespaces the API server makes for itself. It
// makes them without pod-security labels, and the PodSecurity admission
// plugin's default configuration (that of kubeadm and kind) is privileged
// for unlabelled namespaces: so they are privileged unless declared.
var systemNamespaces = map[string]bool{"kube-system": true, "kube-public": true, "kube-node-lease": true}

// How kiln knows the level of a namespace the input does not declare.
const (
	configuredLevel = iota + 1 // psa.namespaces in the configuration
	systemLevel                // a system namespace: privileged
	assumedLevel               // --psa-level / --psa-version
)

// undeclared judges the namespaces the input does not declare.
type undeclared struct {
	configured map[string][]mode
	fallback   []mode
}

// newUndeclared resolves the configured namespaces' labels as upstream
// resolves a Namespace's, and the assumed level.
func newUndeclared(opts *rules.Options) (*undeclared, error) {
	fallback, err := fallbackPolicy(opts)
	if err != nil {
		return nil, err
	}
	u := &undeclared{configured: map[string][]mode{}, fallback: activeModes(fallback)}
	if opts == nil {
		return u, nil
	}
	for name, labels := range opts.PSANamespaces {
		p, err := configuredPolicy(name, labels)
		if err != nil {
			return nil, err
		}
		u.configured[name] = activeModes(p)
	}
	return u, nil
}

// configuredPolicy is the policy of a namespace the configuration gives
// labels (package settings has checked them).
func configuredPolicy(name string, labels map[string]string) (api.Policy, error) {
	p, errs := api.PolicyToEvaluate(labels, clusterDefaults)
	if len(errs) > 0 {
		return api.Policy{}, fmt.Errorf("psa.namespaces.%s: %v", name, errs.ToAggregate())
	}
	return p, nil
}

// modes returns the modes of a namespace the input does not declare, and how they were decided.
func (u *undeclared) modes(ns string) ([]mode, int) {
	if m, ok := u.configured[ns]; ok {
		return m, configuredLevel
	}
	if systemNamespaces[ns] {
		return nil, systemLevel
	}
	return u.fallback, assumedLevel
}

// assumedNote ends the message of a finding judged at the assumed level:
// a short marker of what was assumed. How to say otherwise is said once
// per run, in the summary (Summary.Assumed), and each finding carries the
// namespace (Finding.AssumedNamespace).
func assumedNote(ns string, modes []mode) string {
	level := "privileged"
	if len(modes) > 0 {
		level = string(modes[0].lv.Level)
		if v := modes[0].lv.Version; !v.Latest() {
			level += " " + v.String()
		}
	}
	return fmt.Sprintf("(assumed %s: namespace %q is not in the input)", level, ns)
}
