// Package policies holds kiln's single-object rules written as
// ValidatingAdmissionPolicies (rules/<family>/policies/*.yaml, embedded) and the "policies"
// checker that runs them through the CEL engine (rules/cel), so that the
// same YAML guards Git (kiln lint) and a cluster (kiln policies export).
//
// Each policy carries its rule in annotations: kiln.dev/rule (the rule ID;
// several policies may share one, e.g. for different severities),
// kiln.dev/severity, kiln.dev/summary, kiln.dev/doc, kiln.dev/fail and
// kiln.dev/pass. Messages follow the field-message convention of rules/cel
// (kiln.dev/messages: field-path): "<field path>: <message>" entries joined
// by " | ", one finding per entry at its field.
//
// Data a cluster does not have — the target Kubernetes version, the table of
// helper images — comes from params: the ConfigMap kiln-rule-params in
// namespace kiln-system (see Params), which kiln builds from rules.Options
// for every run and `kiln policies export` ships with the policies.
package policies

import (
	"bytes"
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strings"
	"sync"

	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules"
	"github.com/kilnhq/kiln/rules/cel"
	jobsetpolicies "github.com/kilnhq/kiln/rules/jobset/policies"
	"github.com/kilnhq/kiln/rules/sidecar"
	sidecarpolicies "github.com/kilnhq/kiln/rules/sidecar/policies"
	storagepolicies "github.com/kilnhq/kiln/rules/storage/policies"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// A family is one rule family's policies (rules/<family>/policies,
// embedded) and the repairs it offers for their findings, by rule ID.
type family struct {
	policies fs.FS
	fixes    map[string]rules.Fixer
}

// families are the rule families written as policies, each in its own
// folder beside the family's fixtures and Go code.
var families = []family{
	{policies: jobsetpolicies.Files},
	{policies: sidecarpolicies.Files, fixes: sidecar.PolicyFixes},
	{policies: storagepolicies.Files},
}

// helpers are CEL variables several policies share (the pod templates of a
// workload), written once. A policy line "# kiln:include helpers/NAME.yaml"
// stands for the file's lines, indented as the marker; policies are
// expanded when loaded, so kiln lint and kiln policies export see whole
// policies.
//
//go:embed helpers/*.yaml
var helpers embed.FS

// includeMarker starts a line that stands for a helper file.
const includeMarker = "# kiln:include "

// expandHelpers replaces every include line of a policy by the helper's lines.
func expandHelpers(name string, data []byte) ([]byte, error) {
	if !bytes.Contains(data, []byte(includeMarker)) {
		return data, nil
	}
	var out bytes.Buffer
	for _, line := range bytes.SplitAfter(data, []byte("\n")) {
		trimmed := bytes.TrimLeft(line, " ")
		file, ok := bytes.CutPrefix(bytes.TrimRight(trimmed, "\n"), []byte(includeMarker))
		if !ok {
			out.Write(line)
			continue
		}
		h, err := fs.ReadFile(helpers, string(file))
		if err != nil {
			return nil, fmt.Errorf("%s: %s%s: %v", name, includeMarker, file, err)
		}
		indent := line[:len(line)-len(trimmed)]
		for _, hl := range bytes.SplitAfter(h, []byte("\n")) {
			if len(bytes.TrimSpace(hl)) > 0 {
				out.Write(indent)
			}
			out.Write(hl)
		}
	}
	return out.Bytes(), nil
}

// Annotations on a policy that describe its rule.
const (
	RuleAnnotation     = "kiln.dev/rule"
	SeverityAnnotation = "kiln.dev/severity"
	SummaryAnnotation  = "kiln.dev/summary"
	DocAnnotation      = "kiln.dev/doc"
	FailAnnotation     = "kiln.dev/fail"
	PassAnnotation     = "kiln.dev/pass"
	// KubeBelowAnnotation and KubeAtLeastAnnotation say that a policy can
	// only report below, or at and above, a Kubernetes version (its
	// expressions check params.data.kubeVersion themselves); kiln lint
	// leaves the policy out for other targets, to save its evaluation.
	KubeBelowAnnotation   = "kiln.dev/kube-below"
	KubeAtLeastAnnotation = "kiln.dev/kube-at-least"
)

// Policy is one embedded ValidatingAdmissionPolicy and the rule it implements.
type Policy struct {
	// Name is metadata.name ("kiln-sidecar-classic-in-job").
	Name string
	// File is the embedded file name and Source its bytes (one YAML document).
	File   string
	Source []byte
	// Rule is the rule ID and Severity its severity for this policy's findings.
	Rule     string
	Severity rules.Severity
	// Params reports whether the policy declares paramKind (the params ConfigMap).
	Params bool
	Object *manifest.Object
	// Below and AtLeast bound the targets the policy can report for (zero: none).
	Below, AtLeast manifest.KubeVersion
}

// AppliesTo reports whether the policy can report anything for target v.
func (p *Policy) AppliesTo(v manifest.KubeVersion) bool {
	if p.Below != (manifest.KubeVersion{}) && !v.Less(p.Below) {
		return false
	}
	return p.AtLeast == (manifest.KubeVersion{}) || !v.Less(p.AtLeast)
}

// loaded returns the embedded policies sorted by name, parsed once. The
// parse starts in the background when the package is initialised: kiln
// lint needs the policies only when its engine starts, and the rules they
// implement (Rules) come from their files' metadata alone (metas).
var loaded = sync.OnceValue(mustLoad)

func init() { go loaded() }

// All returns the embedded policies sorted by name.
func All() []*Policy { return append([]*Policy(nil), loaded()...) }

// Rules returns the rules the policies implement, sorted by ID. When
// several policies implement one rule, the first by name that carries a
// kiln.dev/doc describes it.
func Rules() []*rules.Rule { return rulesOf(metas) }

func rulesOf(ms []ruleMeta) []*rules.Rule {
	byID := map[string]*rules.Rule{}
	for _, m := range ms {
		if r := byID[m.rule]; r != nil && r.Doc != "" {
			continue
		}
		a := m.annotations
		byID[m.rule] = &rules.Rule{ID: m.rule, Severity: m.severity, Summary: a[SummaryAnnotation],
			Doc: a[DocAnnotation], Fail: a[FailAnnotation], Pass: a[PassAnnotation]}
	}
	out := make([]*rules.Rule, 0, len(byID))
	for _, r := range byID {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// A ruleMeta is what Rules needs of one policy.
type ruleMeta struct {
	name, rule  string
	severity    rules.Severity
	annotations map[string]string
}

// metas are the policies' rule metadata sorted by name, read when the
// package is initialised from the part of each file before its top-level
// spec (a third of the bytes; a cold start paid about 9 ms to parse them
// whole). TestMetadata holds them equal to the parsed policies'.
var metas = mustLoadMetas()

func mustLoadMetas() []ruleMeta {
	var ms []ruleMeta
	for _, f := range families {
		names, err := fs.Glob(f.policies, "*.yaml")
		if err != nil {
			panic("rules/policies: " + err.Error())
		}
		for _, name := range names {
			data, err := fs.ReadFile(f.policies, name)
			if err == nil {
				var m ruleMeta
				if m, err = metaOf(name, data); err == nil {
					ms = append(ms, m)
					continue
				}
			}
			panic("rules/policies: " + err.Error())
		}
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].name < ms[j].name })
	return ms
}

// metaOf reads a policy's name and annotations from the lines before its
// top-level "spec:", and checks the rule and severity as load does.
func metaOf(name string, data []byte) (ruleMeta, error) {
	head := data
	if i := bytes.Index(data, []byte("\nspec:")); i >= 0 {
		head = data[:i+1]
	}
	var doc struct {
		Metadata struct {
			Name        string            `yaml:"name"`
			Annotations map[string]string `yaml:"annotations"`
		} `yaml:"metadata"`
	}
	if err := yaml.Unmarshal(head, &doc); err != nil {
		return ruleMeta{}, fmt.Errorf("%s: %v", name, err)
	}
	m := ruleMeta{name: doc.Metadata.Name, annotations: doc.Metadata.Annotations}
	if m.name == "" {
		return m, fmt.Errorf("%s: no metadata.name before spec", name)
	}
	var err error
	m.rule, m.severity, err = ruleOf(name, m.annotations)
	return m, err
}

// ruleOf reads the rule ID and severity from a policy's annotations.
func ruleOf(file string, annotations map[string]string) (string, rules.Severity, error) {
	rule := annotations[RuleAnnotation]
	if !strings.Contains(rule, "/") {
		return "", 0, fmt.Errorf("%s: annotation %s must name a rule ID (family/name)", file, RuleAnnotation)
	}
	sev, err := rules.ParseSeverity(annotations[SeverityAnnotation])
	if err != nil {
		return "", 0, fmt.Errorf("%s: annotation %s: %v", file, SeverityAnnotation, err)
	}
	return rule, sev, nil
}

func mustLoad() []*Policy {
	var ps []*Policy
	seen := map[string]bool{}
	for _, f := range families {
		more, err := load(f.policies)
		if err != nil {
			panic("rules/policies: " + err.Error())
		}
		for _, p := range more {
			if seen[p.Name] {
				panic("rules/policies: policy " + p.Name + " is in two families")
			}
			seen[p.Name] = true
		}
		ps = append(ps, more...)
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i].Name < ps[j].Name })
	return ps
}

// load reads every *.yaml of fsys as one ValidatingAdmissionPolicy.
func load(fsys fs.FS) ([]*Policy, error) {
	names, err := fs.Glob(fsys, "*.yaml")
	if err != nil {
		return nil, err
	}
	var out []*Policy
	seen := map[string]string{}
	for _, name := range names {
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		if data, err = expandHelpers(name, data); err != nil {
			return nil, err
		}
		objs, errs := manifest.Parse(name, data)
		if len(errs) > 0 {
			return nil, errs[0]
		}
		if len(objs) != 1 || !cel.IsPolicyObject(objs[0]) || objs[0].Kind != "ValidatingAdmissionPolicy" {
			return nil, fmt.Errorf("%s: want exactly one ValidatingAdmissionPolicy", name)
		}
		o := objs[0]
		p := &Policy{Name: o.Name, File: name, Source: data, Object: o}
		if prev, dup := seen[o.Name]; dup {
			return nil, fmt.Errorf("%s: policy %q is also defined in %s", name, o.Name, prev)
		}
		seen[o.Name] = name
		if p.Rule, p.Severity, err = ruleOf(name, o.Annotations); err != nil {
			return nil, err
		}
		if o.Annotations[cel.FieldMessagesAnnotation] != cel.FieldMessagesValue {
			return nil, fmt.Errorf("%s: kiln's policies follow the field-message convention: set annotation %s: %s", name, cel.FieldMessagesAnnotation, cel.FieldMessagesValue)
		}
		for a, dst := range map[string]*manifest.KubeVersion{KubeBelowAnnotation: &p.Below, KubeAtLeastAnnotation: &p.AtLeast} {
			if v, ok := o.Annotations[a]; ok {
				if *dst, err = manifest.ParseKubeVersion(v); err != nil {
					return nil, fmt.Errorf("%s: annotation %s: %v", name, a, err)
				}
			}
		}
		content, err := o.Content()
		if err != nil {
			return nil, fmt.Errorf("%s: %v", name, err)
		}
		spec, _ := content["spec"].(map[string]any)
		_, p.Params = spec["paramKind"]
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}
