package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/kilnhq/kiln/compiler"
	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/report"
	"github.com/kilnhq/kiln/settings"
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

func newArgoCDGenerateCmd(e *env) *cobra.Command {
	var noSyncWaves bool
	cmd := &cobra.Command{
		Use:   "generate [DIR]",
		Short: "CMP v2 generate: build the app in the current directory, lint it, print the YAML stream",
		Long: `Build the App specs and pass through the plain manifests in DIR (default: the
current directory, where Argo CD runs plugins), lint the result, and print only
the YAML stream on stdout. Findings go to stderr; findings at the fail-on level
(default error) or input errors exit non-zero with nothing on stdout, so Argo CD
shows a sync error. Hidden files and kustomization.yaml are not read.
Compiled objects carry Argo CD sync waves (` + compiler.SyncWaveAnnotation + `:
Namespace -2, ConfigMaps and Services -1, PVCs and workloads 0) unless
--no-sync-waves is given.

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
  SERVICE_CIDRS      service-cidrs    the target cluster's service network: one CIDR, or an IPv4 and an IPv6 one
  NAMESPACE          namespace        namespace for objects without one (overrides ARGOCD_APP_NAMESPACE)

kiln never writes files (HOME need not be writable).`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := "."
			if len(args) == 1 {
				dir = args[0]
			}
			return argoGenerate(e, dir, os.LookupEnv, os.Environ(), !noSyncWaves)
		},
	}
	cmd.Flags().BoolVar(&noSyncWaves, "no-sync-waves", false, "do not annotate compiled objects with Argo CD sync waves")
	return cmd
}

// argoGenerate is kiln argocd generate with its environment passed in.
func argoGenerate(e *env, dir string, getenv func(string) (string, bool), environ []string, syncWaves bool) error {
	given, notes, err := settings.FromArgo(getenv, environ)
	if err != nil {
		return usageErrorf("%v", err)
	}
	for _, n := range notes {
		fmt.Fprintln(e.stderr, "kiln: "+n)
	}
	s, cfg, opts, err := loadSettings(given, nil)
	if err != nil {
		return err
	}
	threshold := s.Threshold()
	files, errs := appFiles(dir)
	if len(errs) > 0 {
		printInputErrors(e, errs)
		return &exitError{code: exitInput}
	}
	set := readInputs(e, files, cfg)
	objs := set.Objects()
	if err := defaultNamespace(objs, s.Namespace); err != nil {
		return err
	}
	x := compiler.Expand(objs)
	if syncWaves {
		if err := x.AddSyncWaves(); err != nil {
			return &exitError{code: exitInput, msg: err.Error()}
		}
	}
	compiled, specErrs := x.All, x.Errors
	if inputErrs := append(set.Errors(), specErrs...); len(inputErrs) > 0 {
		printInputErrors(e, inputErrs)
		return &exitError{code: exitInput}
	}
	if err := defaultNamespace(compiled, s.Namespace); err != nil {
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
