// Package settings holds every setting of a kiln run and the one decoder
// that the command-line flags, .kiln.yaml, the KRM functionConfig and the
// Argo CD environment all go through. Each source turns what it reads into
// assignments (a key, a YAML value, and where it was written); the decoder
// checks and applies them in order, so a mistake is reported the same way
// from every source, naming the setting where it came from.
package settings

import (
	"fmt"
	"net/netip"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/kilnhq/kiln/admit/catalog"
	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Settings are the settings of one run.
type Settings struct {
	// Config is the config file named by --config (or its equivalents);
	// File is the one read ("" for none).
	Config, File   string
	KubeVersion    string
	PSALevel       string
	PSAVersion     string
	Policies       []string
	StorageClasses string
	As             string
	AsGroups       []string
	Authorizer     string
	FailOn         string
	// Namespace is the namespace given to objects without one (Argo CD's
	// application namespace); Helm's is Helm.Namespace.
	Namespace string
	Exclude   []string
	Rules     map[string]string
	Helm      HelmConfig
	// FluxSources map Flux sources ("Kind/namespace/name" or
	// "namespace/name") to the folders holding their files (flux.sources;
	// relative to the config file).
	FluxSources map[string]string
	// ArgoCDRepoURLs are the URLs this repository is known by to Argo CD
	// (argocd.repoURLs); ArgoCDGenerators the parameter sets of the
	// generators kiln cannot run, by ApplicationSet "namespace/name"
	// (argocd.generators).
	ArgoCDRepoURLs   []string
	ArgoCDGenerators map[string][]map[string]any
	// ServiceCIDRs is the cluster's service network (serviceCIDRs).
	ServiceCIDRs []string

	// Baseline is the baseline file whose findings are reported as
	// existing (relative to the config file when it names it);
	// WriteBaseline the file kiln lint records today's findings in.
	Baseline, WriteBaseline string
	// NewFromRev is the Git revision whose findings are reported as
	// existing (kiln lint --new-from-rev).
	NewFromRev string
	// Shard is the part of the objects this run judges (--shard I/N);
	// zero: all of them.
	Shard Shard
	// CacheDir is where kiln lint remembers what it judged ("": the
	// default, $XDG_CACHE_HOME/kiln/judged); NoCache turns that off.
	CacheDir string
	NoCache  bool

	// PSANamespaces are the pod-security.kubernetes.io labels psa.namespaces
	// gives namespaces the input does not declare, by namespace.
	PSANamespaces map[string]map[string]string

	// CRDs are the files and directories of CustomResourceDefinitions
	// that crds: names (relative to the config file); CatalogOff and
	// CatalogVersions are what catalog: says of the built-in CRD catalog.
	CRDs            []string
	CatalogOff      bool
	CatalogVersions map[string]string

	ruleAt map[string]manifest.Position
	// excludeRE are the Exclude globs compiled, in the same order.
	excludeRE []*regexp.Regexp
	// filePolicies is how many of Policies the config file gave.
	filePolicies int
	// given are the assignments from every source but the config file, in
	// order, replayed over the file once it is read.
	given []Assignment
}

// Assignment is one setting as a source gives it.
type Assignment struct {
	// Key is the setting's name in .kiln.yaml, dotted for nested ones
	// (psa.level, helm.values).
	Key   string
	Value *yaml.Node
	// From says where it was written: a flag (--kube-version), file:line:col,
	// an environment variable, a functionConfig line.
	From string
	// Pos is the position when From is a file.
	Pos manifest.Position
}

// kind is what a setting's value must be.
type kind int

const (
	scalar kind = iota
	list
	mapping
	boolean // a flag without a value
	toggle  // true, false or a mapping (catalog)
)

// entry is one setting: its name in each source and how it is applied.
type entry struct {
	key string
	// spec is the name in a KRM functionConfig's spec (flat); flag the
	// kiln flag; env the Argo CD plugin env name after KILN_ and param its
	// plugin parameter. "" where the source does not take it.
	spec, flag, env, param string
	// inFile is set for the settings .kiln.yaml takes.
	inFile bool
	kind   kind
	apply  func(s *Settings, a Assignment, v value) error
}

// value is a decoded assignment.
type value struct {
	str  string
	strs []string
}

var table = []entry{
	{key: "config", param: "config", spec: "config", flag: "config", env: "CONFIG",
		apply: func(s *Settings, a Assignment, v value) error { s.Config = v.str; return nil }},
	{key: "kubeVersion", param: "kube-version", spec: "kubeVersion", flag: "kube-version", env: "KUBE_VERSION", inFile: true, apply: applyKubeVersion},
	{key: "psa.level", param: "psa-level", spec: "psaLevel", flag: "psa-level", env: "PSA_LEVEL", inFile: true, apply: applyPSALevel},
	{key: "psa.version", param: "psa-version", spec: "psaVersion", flag: "psa-version", env: "PSA_VERSION", inFile: true,
		apply: func(s *Settings, a Assignment, v value) error { s.PSAVersion = v.str; return nil }},
	{key: "psa.namespaces", spec: "psaNamespaces", inFile: true, kind: mapping, apply: applyPSANamespaces},
	{key: "policies", param: "policies", spec: "policies", flag: "policy", env: "POLICIES", inFile: true, kind: list,
		apply: func(s *Settings, a Assignment, v value) error {
			// The config file's and then those of one other source: a
			// later source's list replaces an earlier one's.
			if a.Pos.File != "" {
				s.filePolicies = len(s.Policies) + len(v.strs)
			} else {
				s.Policies = s.Policies[:s.filePolicies]
			}
			s.Policies = append(s.Policies, v.strs...)
			return nil
		}},
	{key: "storageClasses", param: "storage-classes", spec: "storageClasses", flag: "storage-classes", env: "STORAGE_CLASSES", inFile: true,
		apply: func(s *Settings, a Assignment, v value) error { s.StorageClasses = v.str; return nil }},
	{key: "as", spec: "as", flag: "as", inFile: true,
		apply: func(s *Settings, a Assignment, v value) error { s.As = v.str; return nil }},
	{key: "asGroups", spec: "asGroups", flag: "as-group", inFile: true, kind: list,
		apply: func(s *Settings, a Assignment, v value) error { s.AsGroups = v.strs; return nil }},
	{key: "authorizer", spec: "authorizer", flag: "authorizer", inFile: true, apply: applyAuthorizer},
	{key: "failOn", param: "fail-on", spec: "failOn", flag: "fail-on", env: "FAIL_ON", inFile: true, apply: applyFailOn},
	{key: "namespace", param: "namespace", env: "NAMESPACE",
		apply: func(s *Settings, a Assignment, v value) error { s.Namespace = v.str; return nil }},
	{key: "exclude", inFile: true, kind: list, apply: applyExclude},
	{key: "rules", spec: "rules", inFile: true, kind: mapping, apply: applyRules},
	{key: "helm.releaseName", flag: "release-name", inFile: true,
		apply: func(s *Settings, a Assignment, v value) error { s.helm(a).ReleaseName = v.str; return nil }},
	{key: "helm.namespace", flag: "namespace", inFile: true,
		apply: func(s *Settings, a Assignment, v value) error { s.helm(a).Namespace = v.str; return nil }},
	{key: "helm.values", flag: "values", inFile: true, kind: list,
		apply: func(s *Settings, a Assignment, v value) error {
			h := s.helm(a)
			for _, p := range v.strs {
				if a.Pos.File != "" && !filepath.IsAbs(p) {
					p = filepath.Join(filepath.Dir(a.Pos.File), p) // relative to the config
				}
				h.Values = append(h.Values, p)
			}
			return nil
		}},
	{key: "helm.set", flag: "set", inFile: true, kind: list,
		apply: func(s *Settings, a Assignment, v value) error {
			h := s.helm(a)
			h.Set = append(h.Set, v.strs...)
			return nil
		}},
	{key: "helm.charts", inFile: true, kind: mapping, apply: applyCharts},
	{key: "flux.sources", inFile: true, kind: mapping, apply: applyFluxSources},
	{key: "argocd.repoURLs", inFile: true, kind: list,
		apply: func(s *Settings, a Assignment, v value) error {
			s.ArgoCDRepoURLs = append(s.ArgoCDRepoURLs, v.strs...)
			return nil
		}},
	{key: "argocd.generators", inFile: true, kind: mapping, apply: applyArgoCDGenerators},

	// The target cluster's service network, which a Service's IP families
	// and cluster IPs are allocated from.
	{key: "baseline", flag: "baseline", inFile: true,
		apply: func(s *Settings, a Assignment, v value) error {
			s.Baseline = v.str
			if a.Pos.File != "" && v.str != "" && !filepath.IsAbs(v.str) {
				s.Baseline = filepath.Join(filepath.Dir(a.Pos.File), v.str) // relative to the config
			}
			return nil
		}},
	{key: "writeBaseline", flag: "write-baseline",
		apply: func(s *Settings, a Assignment, v value) error { s.WriteBaseline = v.str; return nil }},
	{key: "newFromRev", flag: "new-from-rev",
		apply: func(s *Settings, a Assignment, v value) error { s.NewFromRev = v.str; return nil }},
	{key: "shard", flag: "shard", apply: applyShard},
	{key: "cacheDir", flag: "cache-dir",
		apply: func(s *Settings, a Assignment, v value) error { s.CacheDir = v.str; return nil }},
	{key: "noCache", flag: "no-cache", kind: boolean,
		apply: func(s *Settings, a Assignment, v value) error { s.NoCache = v.str == "true"; return nil }},

	// CRDs beside the input, and the built-in catalog (applyCatalog).
	{key: "crds", inFile: true, kind: list,
		apply: func(s *Settings, a Assignment, v value) error {
			for _, p := range v.strs {
				if a.Pos.File != "" && !filepath.IsAbs(p) {
					p = filepath.Join(filepath.Dir(a.Pos.File), p) // relative to the config
				}
				s.CRDs = append(s.CRDs, p)
			}
			return nil
		}},
	{key: "catalog", inFile: true, kind: toggle, apply: applyCatalog},

	{key: "serviceCIDRs", param: "service-cidrs", spec: "serviceCIDRs", flag: "service-cidr", env: "SERVICE_CIDRS", inFile: true, kind: list, apply: applyServiceCIDRs},
}

// helm returns where a Helm setting goes: the config file's defaults, or
// the settings given outside it (flags), which apply after a chart's own.
func (s *Settings) helm(a Assignment) *HelmChart {
	if a.Pos.File != "" {
		return &s.Helm.HelmChart
	}
	return &s.Helm.Given
}

// byKey indexes table (filled by init: table's own functions use it).
var byKey map[string]*entry

func init() {
	byKey = map[string]*entry{}
	for i := range table {
		byKey[table[i].key] = &table[i]
	}
}

func lookup(key string) *entry { return byKey[key] }

// New returns empty settings.
func New() *Settings {
	return &Settings{Rules: map[string]string{}, ruleAt: map[string]manifest.Position{}}
}

// Apply checks and applies one assignment from a source other than the
// config file; it is applied again over the file's settings when the file
// is read.
func (s *Settings) Apply(a Assignment) error {
	if err := s.apply(a); err != nil {
		return err
	}
	s.given = append(s.given, a)
	return nil
}

// apply is the decoder: the value's shape, then the setting's own check.
func (s *Settings) apply(a Assignment) error {
	e := lookup(a.Key)
	if e == nil {
		return a.errorf("unknown setting %q", a.Key)
	}
	n := a.Value
	var v value
	switch e.kind {
	case scalar:
		if n.Kind != yaml.ScalarNode {
			return a.errorf("%s must be a string", a.Key)
		}
		v.str = n.Value
	case boolean:
		if n.Kind != yaml.ScalarNode || (n.Value != "true" && n.Value != "false") {
			return a.errorf("%s must be true or false", a.Key)
		}
		v.str = n.Value
	case list:
		if n.Kind != yaml.SequenceNode {
			return a.errorf("%s must be a list of strings", a.Key)
		}
		for _, it := range n.Content {
			if it.Kind != yaml.ScalarNode {
				return a.at(it).errorf("%s entries must be strings", a.Key)
			}
			v.strs = append(v.strs, it.Value)
		}
	case mapping:
		if n.Kind != yaml.MappingNode {
			return a.errorf("%s must be a mapping", a.Key)
		}
	case toggle:
		if n.Kind == yaml.ScalarNode && (n.Value == "true" || n.Value == "false") {
			v.str = n.Value
		} else if n.Kind != yaml.MappingNode {
			return a.errorf("%s must be true, false or a mapping", a.Key)
		}
	}
	return e.apply(s, a, v)
}

// errorf is an error naming where the assignment was written.
func (a Assignment) errorf(format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if a.Pos.File != "" {
		// A file position does not say which setting: the message does.
		if top, _, _ := strings.Cut(a.Key, "."); !strings.HasPrefix(msg, top) && !strings.HasPrefix(msg, "exclude") {
			msg = a.Key + ": " + msg
		}
		return &manifest.Error{Pos: a.Pos, Msg: msg}
	}
	return &Error{From: a.From, Msg: msg}
}

// at is the assignment moved to a node inside its value (a file position).
func (a Assignment) at(n *yaml.Node) Assignment {
	if a.Pos.File != "" && n.Line > 0 {
		a.Pos.Line, a.Pos.Column = n.Line, n.Column
	}
	return a
}

// Error is a bad setting given outside a file: "--kube-version: ...".
type Error struct{ From, Msg string }

func (e *Error) Error() string { return e.From + ": " + e.Msg }

// Scalar, List make assignment values from flag and environment strings.
func Scalar(s string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}
}

// List is a sequence of strings.
func List(ss []string) *yaml.Node {
	n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
	for _, s := range ss {
		n.Content = append(n.Content, Scalar(s))
	}
	return n
}

func applyKubeVersion(s *Settings, a Assignment, v value) error {
	k, err := manifest.ParseKubeVersion(v.str)
	if err != nil {
		return a.errorf("%v", err)
	}
	if k.Less(manifest.OldestKube) || manifest.LatestKube.Less(k) {
		return a.errorf("Kubernetes %s is outside the range kiln knows (%s to %s)", k, manifest.OldestKube, manifest.LatestKube)
	}
	s.KubeVersion = v.str
	return nil
}

func applyPSALevel(s *Settings, a Assignment, v value) error {
	switch v.str {
	case "privileged", "baseline", "restricted":
		s.PSALevel = v.str
		return nil
	}
	return a.errorf("%q is not a Pod Security level: use privileged, baseline or restricted", v.str)
}

func applyAuthorizer(s *Settings, a Assignment, v value) error {
	if v.str != "allow" && v.str != "deny" {
		return a.errorf("%q: use allow or deny", v.str)
	}
	s.Authorizer = v.str
	return nil
}

// FailOnValues are the values failOn takes.
const FailOnValues = "error, warning or never"

func applyFailOn(s *Settings, a Assignment, v value) error {
	if _, err := ParseFailOn(v.str); err != nil {
		return a.errorf("%q: use %s", v.str, FailOnValues)
	}
	s.FailOn = v.str
	return nil
}

// ParseFailOn turns a failOn value into the lowest severity that fails a
// run; 0 means nothing fails it. The empty string is the default, error.
func ParseFailOn(s string) (rules.Severity, error) {
	switch s {
	case "", "error":
		return rules.Error, nil
	case "warning":
		return rules.Warning, nil
	case "never":
		return 0, nil
	}
	return 0, fmt.Errorf("%q: use %s", s, FailOnValues)
}

func applyExclude(s *Settings, a Assignment, v value) error {
	for i, g := range v.strs {
		if err := checkGlob(g); err != nil {
			return a.at(a.Value.Content[i]).errorf("exclude %q is not a glob kiln reads: use * (within a path segment), ** (across segments) and ?", g)
		}
	}
	s.Exclude = append(s.Exclude, v.strs...)
	for _, g := range v.strs {
		s.excludeRE = append(s.excludeRE, globRE(g))
	}
	return nil
}

// applyServiceCIDRs checks a service network as kube-apiserver checks its
// --service-cluster-ip-range: one or two CIDRs, of different IP families.
func applyServiceCIDRs(s *Settings, a Assignment, v value) error {
	if len(v.strs) > 2 {
		return a.errorf("serviceCIDRs has one or two CIDRs (one per IP family, as --service-cluster-ip-range), not %d", len(v.strs))
	}
	var families []bool
	for i, c := range v.strs {
		p, err := netip.ParsePrefix(strings.TrimSpace(c))
		if err != nil {
			return a.at(a.Value.Content[i]).errorf("serviceCIDRs: %q is not a CIDR (e.g. 10.96.0.0/12 or fd00:10:96::/112)", c)
		}
		families = append(families, p.Addr().Is4())
	}
	if len(families) == 2 && families[0] == families[1] {
		return a.errorf("serviceCIDRs: the two CIDRs of a dual-stack service network must be one IPv4 and one IPv6")
	}
	s.ServiceCIDRs = v.strs
	return nil
}

// applyCatalog reads catalog: false (the built-in CRD catalog off), true,
// or a mapping of catalog projects to the version to use where the
// catalog holds several (flux: v2.7.5), each checked against the catalog.
func applyCatalog(s *Settings, a Assignment, v value) error {
	if v.str != "" {
		s.CatalogOff = v.str == "false"
		return nil
	}
	ix, err := catalog.Load()
	if err != nil {
		return a.errorf("%v", err)
	}
	m := a.Value
	pins := map[string]string{}
	for j := 0; j+1 < len(m.Content); j += 2 {
		k, x := m.Content[j], m.Content[j+1]
		if x.Kind != yaml.ScalarNode {
			return a.at(x).errorf("catalog.%s must be a version (kiln crds list lists them)", k.Value)
		}
		if err := ix.CheckPins(map[string]string{k.Value: x.Value}); err != nil {
			return a.at(k).errorf("catalog.%s: %v", k.Value, err)
		}
		pins[k.Value] = x.Value
	}
	s.CatalogOff, s.CatalogVersions = false, pins
	return nil
}

// ruleValues are the settings a rules entry takes.
var ruleValues = map[string]bool{"off": true, "on": true, "true": true, "false": true, "enabled": true, "disabled": true,
	"error": true, "warning": true, "warn": true, "info": true}

func applyRules(s *Settings, a Assignment, v value) error {
	m := a.Value
	for j := 0; j+1 < len(m.Content); j += 2 {
		k, x := m.Content[j], m.Content[j+1]
		at := a.at(k)
		if x.Kind != yaml.ScalarNode {
			return a.at(x).errorf("rules.%s must be a string", k.Value)
		}
		if !ruleValues[strings.ToLower(x.Value)] {
			return a.at(x).errorf("rules.%s: %q is not a setting: use error, warning, info, on or off", k.Value, x.Value)
		}
		s.Rules[k.Value] = x.Value
		if at.Pos.File != "" {
			s.ruleAt[k.Value] = at.Pos
		} else {
			s.ruleAt[k.Value] = manifest.Position{File: a.From}
		}
	}
	return nil
}

func applyCharts(s *Settings, a Assignment, v value) error {
	m := a.Value
	if s.Helm.Charts == nil {
		s.Helm.Charts = map[string]HelmChart{}
	}
	for j := 0; j+1 < len(m.Content); j += 2 {
		dir, x := m.Content[j].Value, m.Content[j+1]
		what := "helm.charts." + dir
		if x.Kind != yaml.MappingNode {
			return a.at(x).errorf("%s must be a mapping (keys: releaseName, namespace, values, set)", what)
		}
		c := s.Helm.Charts[dir]
		for i := 0; i+1 < len(x.Content); i += 2 {
			k, y := x.Content[i], x.Content[i+1]
			sub := New()
			key := "helm." + k.Value
			if lookup(key) == nil || key == "helm.charts" {
				return a.at(k).errorf("unknown key %s.%s (known: releaseName, namespace, values, set)", what, k.Value)
			}
			if err := sub.apply(Assignment{Key: key, Value: y, From: a.From, Pos: a.at(y).Pos}); err != nil {
				return err
			}
			switch k.Value {
			case "releaseName":
				c.ReleaseName = sub.Helm.ReleaseName
			case "namespace":
				c.Namespace = sub.Helm.Namespace
			case "values":
				c.Values = sub.Helm.Values
			case "set":
				c.Set = sub.Helm.Set
			}
		}
		s.Helm.Charts[dir] = c
	}
	return nil
}

// applyFluxSources reads flux.sources: a Flux source, "Kind/namespace/name"
// or "namespace/name", to the folder its artifact holds.
func applyFluxSources(s *Settings, a Assignment, v value) error {
	m := a.Value
	if s.FluxSources == nil {
		s.FluxSources = map[string]string{}
	}
	for j := 0; j+1 < len(m.Content); j += 2 {
		k, x := m.Content[j], m.Content[j+1]
		if n := strings.Count(k.Value, "/"); n < 1 || n > 2 || strings.HasPrefix(k.Value, "/") || strings.HasSuffix(k.Value, "/") {
			return a.at(k).errorf("flux.sources: %q is not a source: write Kind/namespace/name or namespace/name (GitRepository/flux-system/flux-system)", k.Value)
		}
		if x.Kind != yaml.ScalarNode || x.Value == "" {
			return a.at(x).errorf("flux.sources.%s must be a folder", k.Value)
		}
		dir := x.Value
		if a.Pos.File != "" && !filepath.IsAbs(dir) {
			dir = filepath.Join(filepath.Dir(a.Pos.File), dir) // relative to the config
		}
		s.FluxSources[k.Value] = dir
	}
	return nil
}

// applyArgoCDGenerators reads argocd.generators: an ApplicationSet,
// "namespace/name", to the parameter sets its generators would give (a
// list of mappings).
func applyArgoCDGenerators(s *Settings, a Assignment, v value) error {
	m := a.Value
	if s.ArgoCDGenerators == nil {
		s.ArgoCDGenerators = map[string][]map[string]any{}
	}
	for j := 0; j+1 < len(m.Content); j += 2 {
		k, x := m.Content[j], m.Content[j+1]
		if strings.Count(k.Value, "/") != 1 || strings.HasPrefix(k.Value, "/") || strings.HasSuffix(k.Value, "/") {
			return a.at(k).errorf("argocd.generators: %q is not an ApplicationSet: write namespace/name (argocd/guestbook)", k.Value)
		}
		var sets []map[string]any
		if x.Kind != yaml.SequenceNode || x.Decode(&sets) != nil {
			return a.at(x).errorf("argocd.generators.%s must be a list of parameter sets (mappings)", k.Value)
		}
		s.ArgoCDGenerators[k.Value] = sets
	}
	return nil
}

// keys lists the settings a source takes, for "known: ..." messages.
func keys(name func(e *entry) string) string {
	var out []string
	for i := range table {
		if n := name(&table[i]); n != "" {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}
