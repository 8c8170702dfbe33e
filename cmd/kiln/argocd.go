package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/report"
	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

func init() { commands = append(commands, newArgoCDCmd) }

func newArgoCDCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "argocd",
		Short: "Argo CD config management plugin (CMP v2) commands",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(newArgoCDGenerateCmd(e))
	return cmd
}

// argoEnvPrefix prefixes the kiln settings an Application sets in
// spec.source.plugin.env (Argo CD adds ARGOCD_ENV_ to every name there).
const argoEnvPrefix = "ARGOCD_ENV_KILN_"

// argoSetting is one option settable from an Application: as an env entry
// (KILN_<Env>) or as a parameter (<Param>).
type argoSetting struct {
	Env, Param string
	List       bool
	set        func(s *argoSettings, v []string)
}

// argoSettings are the options of one generate run.
type argoSettings struct {
	flags     lintFlags
	failOn    string
	namespace string
}

var argoOptions = []argoSetting{
	{Env: "KUBE_VERSION", Param: "kube-version", set: func(s *argoSettings, v []string) { s.flags.kubeVersion = v[0] }},
	{Env: "PSA_LEVEL", Param: "psa-level", set: func(s *argoSettings, v []string) { s.flags.psaLevel = v[0] }},
	{Env: "PSA_VERSION", Param: "psa-version", set: func(s *argoSettings, v []string) { s.flags.psaVersion = v[0] }},
	{Env: "FAIL_ON", Param: "fail-on", set: func(s *argoSettings, v []string) { s.failOn = v[0] }},
	{Env: "POLICIES", Param: "policies", List: true, set: func(s *argoSettings, v []string) { s.flags.policies = v }},
	{Env: "CONFIG", Param: "config", set: func(s *argoSettings, v []string) { s.flags.config = v[0] }},
	{Env: "STORAGE_CLASSES", Param: "storage-classes", set: func(s *argoSettings, v []string) { s.flags.storageClasses = v[0] }},
	{Env: "NAMESPACE", Param: "namespace", set: func(s *argoSettings, v []string) { s.namespace = v[0] }},
}

func argoOptionNames(param bool) string {
	var names []string
	for _, o := range argoOptions {
		if param {
			names = append(names, o.Param)
		} else {
			names = append(names, argoEnvPrefix+o.Env)
		}
	}
	return strings.Join(names, ", ")
}

// splitList splits a list given as one string: comma- or space-separated.
func splitList(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\n' || r == '\t' })
}

// argoParameter is one entry of ARGOCD_APP_PARAMETERS.
type argoParameter struct {
	Name   string            `json:"name"`
	String *string           `json:"string,omitempty"`
	Array  []string          `json:"array,omitempty"`
	Map    map[string]string `json:"map,omitempty"`
}

// readArgoSettings reads the settings from Argo CD's environment, most
// specific last: KUBE_VERSION (the destination cluster, which beats
// .kiln.yaml) and ARGOCD_APP_NAMESPACE, then ARGOCD_ENV_KILN_*, then
// ARGOCD_APP_PARAMETERS.
// Unknown kiln settings are errors, so that a typo does not pass silently.
// notes are things to tell the user on stderr.
func readArgoSettings(getenv func(string) (string, bool), environ []string) (s *argoSettings, notes []string, err error) {
	s = &argoSettings{}
	if kv, ok := getenv("KUBE_VERSION"); ok && kv != "" {
		v, perr := manifest.ParseKubeVersion(cutVersionMetadata(kv))
		switch {
		case perr != nil:
			notes = append(notes, fmt.Sprintf("KUBE_VERSION %q is not a Kubernetes version; judging for %s", kv, manifest.LatestKube))
		case manifest.LatestKube.Less(v):
			notes = append(notes, fmt.Sprintf("KUBE_VERSION %s is newer than kiln knows; judging for %s", kv, manifest.LatestKube))
			s.flags.kubeVersion = manifest.LatestKube.String()
		default:
			s.flags.kubeVersion = v.String()
		}
	}
	s.namespace, _ = getenv("ARGOCD_APP_NAMESPACE")

	byEnv, byParam := map[string]*argoSetting{}, map[string]*argoSetting{}
	for i := range argoOptions {
		byEnv[argoEnvPrefix+argoOptions[i].Env] = &argoOptions[i]
		byParam[argoOptions[i].Param] = &argoOptions[i]
	}
	var envNames []string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, argoEnvPrefix) {
			envNames = append(envNames, name)
		}
	}
	sort.Strings(envNames)
	for _, name := range envNames {
		o := byEnv[name]
		if o == nil {
			return nil, nil, usageErrorf("unknown setting %s in the Application's plugin env (known: %s)", name, argoOptionNames(false))
		}
		v, _ := getenv(name)
		if o.List {
			o.set(s, splitList(v))
		} else {
			o.set(s, []string{v})
		}
	}

	raw, ok := getenv("ARGOCD_APP_PARAMETERS")
	if !ok || strings.TrimSpace(raw) == "" {
		return s, notes, nil
	}
	var params []argoParameter
	if err := json.Unmarshal([]byte(raw), &params); err != nil {
		return nil, nil, usageErrorf("ARGOCD_APP_PARAMETERS is not a JSON list of parameters: %v", err)
	}
	for _, p := range params {
		o := byParam[p.Name]
		if o == nil {
			return nil, nil, usageErrorf("unknown plugin parameter %q in the Application (known: %s)", p.Name, argoOptionNames(true))
		}
		switch {
		case p.Map != nil:
			return nil, nil, usageErrorf("plugin parameter %q takes a string, not a map", p.Name)
		case p.Array != nil && !o.List:
			return nil, nil, usageErrorf("plugin parameter %q takes a string, not an array", p.Name)
		case p.Array != nil:
			o.set(s, p.Array)
		case p.String != nil && o.List:
			o.set(s, splitList(*p.String))
		case p.String != nil:
			o.set(s, []string{*p.String})
		}
	}
	return s, notes, nil
}

// cutVersionMetadata drops build metadata and pre-release suffixes: v1.31.2+k3s1 → v1.31.2.
func cutVersionMetadata(v string) string {
	v = strings.TrimSpace(v)
	if i := strings.IndexAny(v, "+-"); i >= 0 {
		v = v[:i]
	}
	return v
}

func newArgoCDGenerateCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "generate [DIR]",
		Short: "CMP v2 generate: build the app in the current directory, lint it, print the YAML stream",
		Long: `Build the App specs and pass through the plain manifests in DIR (default: the
current directory, where Argo CD runs plugins), lint the result, and print only
the YAML stream on stdout. Findings go to stderr; findings at the fail-on level
(default error) or input errors exit non-zero with nothing on stdout, so Argo CD
shows a sync error. Hidden files and kustomization.yaml are not read.

Settings, later ones win:
  .kiln.yaml in DIR            as for kiln lint (or the file KILN_CONFIG names)
  KUBE_VERSION                 the destination cluster's version, set by Argo CD
                               (newer than kiln knows: judged as the newest it knows)
  ARGOCD_APP_NAMESPACE         namespace for namespaced objects and App specs without one
  ARGOCD_ENV_KILN_<NAME>       from the Application's spec.source.plugin.env (name: KILN_<NAME>)
  ARGOCD_APP_PARAMETERS        from the Application's spec.source.plugin.parameters

  env name (KILN_…)  parameter        meaning
  KUBE_VERSION       kube-version     target Kubernetes version, e.g. 1.31
  PSA_LEVEL          psa-level        Pod Security level for namespaces not in the app
  PSA_VERSION        psa-version      Pod Security version for them
  FAIL_ON            fail-on          error (default), warning or never
  POLICIES           policies         policy files or directories (comma-separated, or an array parameter)
  CONFIG             config           config file instead of .kiln.yaml
  STORAGE_CLASSES    storage-classes  file of StorageClass objects of the target cluster
  NAMESPACE          namespace        namespace for objects without one (overrides ARGOCD_APP_NAMESPACE)

kiln never writes files (HOME need not be writable).`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := "."
			if len(args) == 1 {
				dir = args[0]
			}
			return argoGenerate(e, dir, os.LookupEnv, os.Environ())
		},
	}
}

// argoGenerate is kiln argocd generate with its environment passed in.
func argoGenerate(e *env, dir string, getenv func(string) (string, bool), environ []string) error {
	s, notes, err := readArgoSettings(getenv, environ)
	if err != nil {
		return err
	}
	for _, n := range notes {
		fmt.Fprintln(e.stderr, "kiln: "+n)
	}
	threshold, err := parseFailOn(s.failOn)
	if err != nil {
		return err
	}
	cfg, opts, err := s.flags.load()
	if err != nil {
		return err
	}
	files, errs := appFiles(dir)
	if len(errs) > 0 {
		printInputErrors(e, errs)
		return &exitError{code: exitInput}
	}
	set := readInputs(e, files, cfg)
	objs := set.Objects()
	if err := defaultNamespace(objs, s.namespace); err != nil {
		return err
	}
	compiled, specErrs := compileSpecs(objs, opts)
	if inputErrs := append(set.Errors(), specErrs...); len(inputErrs) > 0 {
		printInputErrors(e, inputErrs)
		return &exitError{code: exitInput}
	}
	if err := defaultNamespace(compiled, s.namespace); err != nil {
		return err
	}
	res, err := lintObjects(compiled, fileObjects(set), cfg, opts)
	if err != nil {
		return &exitError{code: exitInput, msg: err.Error()}
	}
	if len(res.Active()) > 0 {
		if err := report.Write(e.stderr, "text", res, report.Options{ToolVersion: version}); err != nil {
			return err
		}
	}
	if failsAt(res, threshold) {
		return &exitError{code: exitFindings, msg: "lint findings at the fail-on level; nothing generated"}
	}
	var out bytes.Buffer
	if err := manifest.Write(&out, compiled); err != nil {
		return err
	}
	_, err = e.stdout.Write(out.Bytes())
	return err
}

// appFiles lists the manifests of an app directory: what kiln lint would
// read, less hidden files (.kiln.yaml, CI files) and kustomization files.
func appFiles(dir string) ([]string, []error) {
	all, errs := manifest.Expand([]string{dir})
	var files []string
	for _, f := range all {
		base := filepath.Base(f)
		switch {
		case strings.HasPrefix(base, "."):
		case base == "kustomization.yaml" || base == "kustomization.yml" || base == "Kustomization":
		default:
			files = append(files, f)
		}
	}
	if len(files) == 0 && len(errs) == 0 {
		errs = append(errs, &manifest.Error{Pos: manifest.Position{File: dir}, Msg: "no manifests or App specs to generate from"})
	}
	return files, errs
}

// defaultNamespace sets metadata.namespace on namespaced objects (and App
// specs) that have none. It runs before anything reads the objects' content.
func defaultNamespace(objs []*manifest.Object, ns string) error {
	if ns == "" {
		return nil
	}
	for _, o := range objs {
		if o.Namespace != "" || clusterScoped(o) {
			continue
		}
		if err := yaml.NewRNode(o.Node()).SetNamespace(ns); err != nil {
			return fmt.Errorf("%s: setting the namespace: %w", o.Pos(), err)
		}
		o.Namespace = ns
	}
	return nil
}

// clusterScoped reports whether an object takes no namespace: a built-in
// cluster-scoped kind, or any kind named Cluster* (ClusterIssuer, ClusterPolicy…).
func clusterScoped(o *manifest.Object) bool {
	return manifest.BuiltinClusterScoped(schema.GroupKind{Group: o.Group(), Kind: o.Kind}) || strings.HasPrefix(o.Kind, "Cluster")
}
