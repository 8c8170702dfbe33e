package settings

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/kilnhq/kiln/manifest"
	"github.com/spf13/pflag"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// flagHelp is each flag's help text.
var flagHelp = map[string]string{
	"config":          "config file (default: the nearest " + FileName + " above the linted paths, up to the repository's root, else the current directory's)",
	"kube-version":    "target Kubernetes version, e.g. 1.31 (default " + manifest.LatestKube.String() + ")",
	"psa-level":       "Pod Security level assumed for workloads whose Namespace is not in the input nor in psa.namespaces (kube-system, kube-public and kube-node-lease are privileged): privileged, baseline or restricted (default restricted)",
	"psa-version":     "Pod Security version for those workloads, e.g. v1.31 or latest (default latest)",
	"policy":          "file or directory of ValidatingAdmissionPolicies and bindings to apply (repeatable)",
	"as":              "user name CEL policies see in request.userInfo (default kiln:offline)",
	"as-group":        "group CEL policies see in request.userInfo (repeatable or comma-separated; default system:authenticated)",
	"authorizer":      "what the CEL authorizer answers: allow or deny (default deny)",
	"storage-classes": "file of StorageClass objects describing the target cluster",
	"service-cidr":    "the target cluster's service network, as kube-apiserver's --service-cluster-ip-range: one CIDR, or an IPv4 and an IPv6 one for dual-stack (repeatable or comma-separated; default: single-stack IPv4)",
	"fail-on":         "lowest severity that makes kiln exit 1: " + FailOnValues + " (default error)",
	"values":          "Helm values file for the charts linted (repeatable; over each chart's values.yaml)",
	"set":             "Helm value for the charts linted, as helm --set a.b=c (repeatable)",
	"release-name":    "Helm release name charts are rendered with (default release-name)",
	"namespace":       "Helm release namespace charts are rendered with (default default)",
	"baseline":        "baseline file (from --write-baseline): its findings are reported as existing and never fail the run; only new ones do",
	"write-baseline":  "record today's findings in this baseline file (then lint with it)",
	"new-from-rev":    "report only findings that the tree at this Git revision (e.g. origin/main) does not have: it is read from Git and judged the same way",
	"cache-dir":       "directory where kiln lint remembers what it judged, keyed by content, to judge only what changed next time (default $XDG_CACHE_HOME/kiln/judged)",
	"no-cache":        "judge every object afresh: neither read nor write the cache",
	"shard":           "judge only shard I of N of the objects (e.g. 2/4; by object identity), reading every file for context; combine the shards' -f json with kiln report merge",
}

// Lint are the flags of every command that lints; Helm and FailOn those
// only kiln lint takes.
var (
	Lint   = []string{"config", "kube-version", "psa-level", "psa-version", "policy", "as", "as-group", "authorizer", "storage-classes", "service-cidr"}
	Helm   = []string{"values", "set", "release-name", "namespace"}
	FailOn = []string{"fail-on"}
	// Adopt are kiln lint's flags for adopting kiln on an existing
	// repository and for large ones: baselines, only new findings, shards.
	Adopt = []string{"baseline", "write-baseline", "new-from-rev", "shard"}
	// Cache are kiln lint's flags for its content cache.
	Cache = []string{"cache-dir", "no-cache"}
)

// Flags are settings' flags registered on a command.
type Flags struct {
	fs     *pflag.FlagSet
	names  []string
	strs   map[string]*string
	arrays map[string]*[]string
	bools  map[string]*bool
}

// RegisterFlags adds the named flags to fs.
func RegisterFlags(fs *pflag.FlagSet, names ...[]string) *Flags {
	f := &Flags{fs: fs, strs: map[string]*string{}, arrays: map[string]*[]string{}, bools: map[string]*bool{}}
	for _, group := range names {
		for _, name := range group {
			e := byFlag(name)
			f.names = append(f.names, name)
			switch {
			case e.kind == list && (name == "as-group" || name == "service-cidr"):
				f.arrays[name] = fs.StringSlice(name, nil, flagHelp[name])
			case e.kind == list:
				f.arrays[name] = fs.StringArray(name, nil, flagHelp[name])
			case e.kind == boolean:
				f.bools[name] = fs.Bool(name, false, flagHelp[name])
			default:
				f.strs[name] = fs.String(name, "", flagHelp[name])
			}
		}
	}
	return f
}

func byFlag(name string) *entry {
	for i := range table {
		if table[i].flag == name {
			return &table[i]
		}
	}
	panic("settings: no flag " + name)
}

// Settings returns the settings the flags given on the command line set.
func (f *Flags) Settings() (*Settings, error) {
	s := New()
	for _, name := range f.names {
		if !f.fs.Changed(name) {
			continue
		}
		e := byFlag(name)
		var v *yaml.Node
		if p, ok := f.arrays[name]; ok {
			v = List(*p)
		} else if b, ok := f.bools[name]; ok {
			v = Scalar(fmt.Sprint(*b))
		} else {
			v = Scalar(*f.strs[name])
		}
		if err := s.Apply(Assignment{Key: e.key, Value: v, From: "--" + name}); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// FromSpec reads the spec of a KRM Lint functionConfig: the settings by
// their flat names (kubeVersion, psaLevel, rules, ...).
func FromSpec(spec *yaml.Node) (*Settings, error) {
	s := New()
	if spec == nil || spec.ShortTag() == "!!null" {
		return s, nil
	}
	if spec.Kind != yaml.MappingNode {
		return nil, &Error{From: fmt.Sprintf("functionConfig line %d", spec.Line), Msg: "spec must be a mapping"}
	}
	known := keys(func(e *entry) string { return e.spec })
	for i := 0; i+1 < len(spec.Content); i += 2 {
		k, v := spec.Content[i], spec.Content[i+1]
		from := fmt.Sprintf("functionConfig line %d: spec.%s", k.Line, k.Value)
		var e *entry
		for j := range table {
			if table[j].spec == k.Value && k.Value != "" {
				e = &table[j]
			}
		}
		if e == nil {
			return nil, &Error{From: fmt.Sprintf("functionConfig line %d", k.Line), Msg: "unknown key spec." + k.Value + " (known: " + known + ")"}
		}
		if err := s.Apply(Assignment{Key: e.key, Value: v, From: from}); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// ArgoEnvPrefix prefixes the settings an Application sets in
// spec.source.plugin.env (Argo CD adds ARGOCD_ENV_ to every name there).
const ArgoEnvPrefix = "ARGOCD_ENV_KILN_"

// ArgoNames lists the plugin env names or the parameter names kiln takes.
func ArgoNames(param bool) string {
	return keys(func(e *entry) string {
		switch {
		case param:
			return e.param
		case e.env != "":
			return ArgoEnvPrefix + e.env
		}
		return ""
	})
}

// argoParameter is one entry of ARGOCD_APP_PARAMETERS.
type argoParameter struct {
	Name   string            `json:"name"`
	String *string           `json:"string,omitempty"`
	Array  []string          `json:"array,omitempty"`
	Map    map[string]string `json:"map,omitempty"`
}

// FromArgo reads the settings from Argo CD's environment, most specific
// last: KUBE_VERSION (the destination cluster, which beats .kiln.yaml) and
// ARGOCD_APP_NAMESPACE, then ARGOCD_ENV_KILN_*, then ARGOCD_APP_PARAMETERS.
// An unknown kiln setting is an error, so that a typo does not pass
// silently; notes are things to tell the user.
func FromArgo(getenv func(string) (string, bool), environ []string) (s *Settings, notes []string, err error) {
	s = New()
	if notes, err = argoKubeVersion(s, getenv); err != nil {
		return nil, nil, err
	}
	if ns, ok := getenv("ARGOCD_APP_NAMESPACE"); ok {
		if err := s.Apply(Assignment{Key: "namespace", Value: Scalar(ns), From: "ARGOCD_APP_NAMESPACE"}); err != nil {
			return nil, nil, err
		}
	}
	if err := argoEnv(s, getenv, environ); err != nil {
		return nil, nil, err
	}
	if err := argoParameters(s, getenv); err != nil {
		return nil, nil, err
	}
	return s, notes, nil
}

// argoKubeVersion applies KUBE_VERSION, the destination cluster's
// version: one kiln cannot read or newer than it knows is a note.
func argoKubeVersion(s *Settings, getenv func(string) (string, bool)) (notes []string, err error) {
	kv, ok := getenv("KUBE_VERSION")
	if !ok || kv == "" {
		return nil, nil
	}
	v, perr := manifest.ParseKubeVersion(cutVersionMetadata(kv))
	switch {
	case perr != nil:
		notes = append(notes, fmt.Sprintf("KUBE_VERSION %q is not a Kubernetes version; judging for %s", kv, manifest.LatestKube))
	case manifest.LatestKube.Less(v):
		notes = append(notes, fmt.Sprintf("KUBE_VERSION %s is newer than kiln knows; judging for %s", kv, manifest.LatestKube))
		err = s.Apply(Assignment{Key: "kubeVersion", Value: Scalar(manifest.LatestKube.String()), From: "KUBE_VERSION"})
	default:
		err = s.Apply(Assignment{Key: "kubeVersion", Value: Scalar(v.String()), From: "KUBE_VERSION"})
	}
	return notes, err
}

// argoEnv applies the ARGOCD_ENV_KILN_* variables, by name.
func argoEnv(s *Settings, getenv func(string) (string, bool), environ []string) error {
	var names []string
	for _, kv := range environ {
		if name, _, _ := strings.Cut(kv, "="); strings.HasPrefix(name, ArgoEnvPrefix) {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		var e *entry
		for j := range table {
			if table[j].env != "" && ArgoEnvPrefix+table[j].env == name {
				e = &table[j]
			}
		}
		if e == nil {
			return &Error{From: name, Msg: "unknown setting in the Application's plugin env (known: " + ArgoNames(false) + ")"}
		}
		v, _ := getenv(name)
		if err := s.Apply(Assignment{Key: e.key, Value: argoValue(e, v), From: name}); err != nil {
			return err
		}
	}
	return nil
}

// argoParameters applies ARGOCD_APP_PARAMETERS.
func argoParameters(s *Settings, getenv func(string) (string, bool)) error {
	raw, ok := getenv("ARGOCD_APP_PARAMETERS")
	if !ok || strings.TrimSpace(raw) == "" {
		return nil
	}
	var params []argoParameter
	if err := json.Unmarshal([]byte(raw), &params); err != nil {
		return &Error{From: "ARGOCD_APP_PARAMETERS", Msg: "not a JSON list of parameters: " + err.Error()}
	}
	for _, p := range params {
		var e *entry
		for j := range table {
			if table[j].param != "" && table[j].param == p.Name {
				e = &table[j]
			}
		}
		from := "plugin parameter " + p.Name
		if e == nil {
			return &Error{From: from, Msg: "unknown in the Application (known: " + ArgoNames(true) + ")"}
		}
		var v *yaml.Node
		switch {
		case p.Map != nil:
			return &Error{From: from, Msg: "takes a string, not a map"}
		case p.Array != nil && e.kind != list:
			return &Error{From: from, Msg: "takes a string, not an array"}
		case p.Array != nil:
			v = List(p.Array)
		case p.String != nil:
			v = argoValue(e, *p.String)
		default:
			continue
		}
		if err := s.Apply(Assignment{Key: e.key, Value: v, From: from}); err != nil {
			return err
		}
	}
	return nil
}

// argoValue is a string from Argo CD as a setting's value: a list setting
// splits it at commas and spaces.
func argoValue(e *entry, v string) *yaml.Node {
	if e.kind == list {
		return List(strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' || r == '\n' || r == '\t' }))
	}
	return Scalar(v)
}

// cutVersionMetadata drops build metadata and pre-release suffixes: v1.31.2+k3s1 → v1.31.2.
func cutVersionMetadata(v string) string {
	v = strings.TrimSpace(v)
	if i := strings.IndexAny(v, "+-"); i >= 0 {
		v = v[:i]
	}
	return v
}
