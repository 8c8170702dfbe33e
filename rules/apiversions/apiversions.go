// Package apiversions holds the api/… rules: apiVersion/kind pairs that the
// target Kubernetes version no longer serves (api/removed) or serves with a
// deprecation warning (api/deprecated). The table is data, apis.yaml,
// taken from the Kubernetes Deprecated API Migration Guide (see its header)
// and checked against the served versions generated from each release's
// sources (admit/servedversions).
//
// Both rules are single-object: each looks at one object's apiVersion and
// kind, plus the table and the target version.
package apiversions

import (
	_ "embed"
	"fmt"
	"strings"

	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Rule IDs.
const (
	Removed    = "api/removed"
	Deprecated = "api/deprecated"
)

//go:embed apis.yaml
var apisYAML []byte

// API is one deprecated apiVersion/kind pair.
type API struct {
	APIVersion string
	Kind       string
	Deprecated manifest.KubeVersion
	// Removed is the first release that no longer serves it (zero: none scheduled).
	Removed manifest.KubeVersion
	// Replacement is the apiVersion to use instead, or text saying what to do.
	Replacement string
	// Source is "" for entries from the migration guide, else where the entry comes from.
	Source string
}

// Table returns the table of deprecated APIs, in file order.
func Table() []API { return append([]API(nil), table...) }

var (
	table = mustLoad(apisYAML)
	index = func() map[[2]string]*API {
		m := make(map[[2]string]*API, len(table))
		for i := range table {
			m[[2]string{table[i].APIVersion, table[i].Kind}] = &table[i]
		}
		return m
	}()
)

// load parses apis.yaml.
func load(data []byte) ([]API, error) {
	var doc struct {
		APIs []struct {
			APIVersion  string `yaml:"apiVersion"`
			Kind        string `yaml:"kind"`
			Deprecated  string `yaml:"deprecated"`
			Removed     string `yaml:"removed"`
			Replacement string `yaml:"replacement"`
			Source      string `yaml:"source"`
		} `yaml:"apis"`
	}
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	seen := map[[2]string]bool{}
	var out []API
	for _, e := range doc.APIs {
		key := [2]string{e.APIVersion, e.Kind}
		if e.APIVersion == "" || e.Kind == "" || e.Replacement == "" || seen[key] {
			return nil, fmt.Errorf("entry %s %s: apiVersion, kind and replacement are required, once per pair", e.APIVersion, e.Kind)
		}
		seen[key] = true
		a := API{APIVersion: e.APIVersion, Kind: e.Kind, Replacement: e.Replacement, Source: e.Source}
		var err error
		if a.Deprecated, err = manifest.ParseKubeVersion(e.Deprecated); err != nil {
			return nil, fmt.Errorf("entry %s %s: deprecated: %v", e.APIVersion, e.Kind, err)
		}
		if e.Removed != "" {
			if a.Removed, err = manifest.ParseKubeVersion(e.Removed); err != nil {
				return nil, fmt.Errorf("entry %s %s: removed: %v", e.APIVersion, e.Kind, err)
			}
			if !a.Deprecated.Less(a.Removed) {
				return nil, fmt.Errorf("entry %s %s: removed %s is not after deprecated %s", e.APIVersion, e.Kind, a.Removed, a.Deprecated)
			}
		}
		out = append(out, a)
	}
	return out, nil
}

func mustLoad(data []byte) []API {
	t, err := load(data)
	if err != nil {
		panic("apiversions: apis.yaml: " + err.Error())
	}
	return t
}

// Checker reports the api/… rules.
var Checker = &rules.Checker{Name: "apiversions", Rules: ruleList, Prepare: prepare}

func prepare(p *rules.Pass) (rules.Judge, error) {
	return func(o *manifest.Object) {
		kube := p.Options.KubeVersion
		checkAPIVersion(o, kube, func(rule, msg string) {
			d := rules.Diagnostic{Rule: rule, Object: o, Field: "apiVersion", Message: msg}
			if rule == Removed {
				d.Fix = rewriteFix(o.APIVersion, o.Kind, kube)
			}
			p.Report(d)
		})
	}, nil
}

// checkAPIVersion is the single-object check behind both rules.
func checkAPIVersion(o *manifest.Object, kube manifest.KubeVersion, report func(rule, msg string)) {
	a := index[[2]string{o.APIVersion, o.Kind}]
	if a == nil || kube.Less(a.Deprecated) {
		return
	}
	use, migrate := "use "+a.Replacement, "migrate to "+a.Replacement
	if what, ok := strings.CutPrefix(a.Replacement, "none: "); ok {
		use, migrate = "no version replaces it: "+what, "no version replaces it: "+what
	}
	if a.Removed != (manifest.KubeVersion{}) && kube.AtLeast(a.Removed) {
		report(Removed, fmt.Sprintf("%s %s was removed in Kubernetes %s (deprecated in %s) and is not served by %s; %s",
			a.APIVersion, a.Kind, a.Removed, a.Deprecated, kube, use))
		return
	}
	removal := "no removal is scheduled"
	if a.Removed != (manifest.KubeVersion{}) {
		removal = "it is removed in " + a.Removed.String()
	}
	report(Deprecated, fmt.Sprintf("%s %s is deprecated since Kubernetes %s and %s; %s",
		a.APIVersion, a.Kind, a.Deprecated, removal, migrate))
}

var ruleList = []*rules.Rule{
	{
		ID:       Removed,
		Severity: rules.Error,
		Summary:  "an apiVersion/kind that the target Kubernetes version no longer serves",
		Doc: `Kubernetes stops serving deprecated API versions at a set release; applying
an object with a removed apiVersion fails ("no matches for kind ... in
version ..."). kiln's table comes from the Kubernetes Deprecated API
Migration Guide (removals from 1.16 to 1.32), completed for 1.33 to 1.37 with
the alpha and beta versions that k8s.io/api marks as removed; see apis.yaml
in the apiversions package. The target is --kube-version (default: the
newest kiln knows).

Fix: change apiVersion to the replacement the message names and check the
guide for field changes (kubectl-convert can rewrite a file), or, for an
older cluster, lint with its --kube-version.`,
		Fail: `# kiln lint --kube-version 1.29
apiVersion: flowcontrol.apiserver.k8s.io/v1beta2
kind: FlowSchema
metadata: {name: batch-jobs}
spec:
  priorityLevelConfiguration: {name: workload-low}
`,
		Pass: `# kiln lint --kube-version 1.29
apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: FlowSchema
metadata: {name: batch-jobs}
spec:
  priorityLevelConfiguration: {name: workload-low}
`,
	},
	{
		ID:       Deprecated,
		Severity: rules.Warning,
		Summary:  "an apiVersion/kind that is deprecated in the target Kubernetes version",
		Doc: `The target Kubernetes version still serves this apiVersion, with a
deprecation warning, and a later release removes it (the message names
which). Same table as api/removed.

Fix: move to the replacement now, while both versions are served.`,
		Fail: `# kiln lint --kube-version 1.24
apiVersion: policy/v1beta1
kind: PodDisruptionBudget
metadata: {name: web, namespace: shop}
spec: {minAvailable: 1, selector: {matchLabels: {app: web}}}
`,
		Pass: `# kiln lint --kube-version 1.24
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web, namespace: shop}
spec: {minAvailable: 1, selector: {matchLabels: {app: web}}}
`,
	},
}

// RemovedAt reports whether the table lists apiVersion/kind as removed at
// kube (api/removed reports it, with the version to migrate to).
func RemovedAt(apiVersion, kind string, kube manifest.KubeVersion) bool {
	a := index[[2]string{apiVersion, kind}]
	return a != nil && a.Removed != (manifest.KubeVersion{}) && kube.AtLeast(a.Removed)
}
