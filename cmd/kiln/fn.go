package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules"
	"github.com/kilnhq/kiln/settings"
	"github.com/spf13/cobra"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

func init() { commands = append(commands, newFnCmd) }

// The functionConfig kinds kiln fn understands.
const (
	kilnAPIVersion = "kiln.dev/v1alpha1"
	lintKind       = "Lint"
	appKind        = "App"
)

func newFnCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "fn",
		Short: "KRM function: a ResourceList on stdin, one on stdout (validator or generator)",
		Long: `Run kiln as a KRM function (config.kubernetes.io/v1 ResourceList on stdin,
ResourceList on stdout), e.g. from kustomize with
kustomize build --enable-alpha-plugins --enable-exec.

The functionConfig decides the role:

  kind: Lint (apiVersion: kiln.dev/v1alpha1), or none: validator. Items pass
  through unchanged; every finding becomes a results[] entry (severity,
  message, resourceRef, field.path, file.path/index from the
  internal.config.kubernetes.io/path and index annotations). Findings at the
  failOn level (default error) make kiln exit 1, so kustomize build stops.
  Items marked config.kubernetes.io/local-config: "true" are not linted.
  spec keys: kubeVersion, psaLevel, psaVersion, policies, storageClasses, as,
  asGroups, authorizer, config, rules, failOn (the kiln lint flags). In
  kustomize, list it under transformers: (kustomize rejects any function under
  validators: that passes, kustomize issue #5036).

  kind: App (apiVersion: kiln.dev/v1alpha1): generator. The spec is compiled
  and its objects are appended to items; the generated objects are linted and
  error findings fail the function.

Exit codes: 0 ok, 1 findings at the failOn level, 2 bad input or functionConfig.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runFn(e)
		},
	}
}

// errFnFindings marks a run whose results must fail the function.
var errFnFindings = errors.New("findings at the failOn level")

// runFn reads a ResourceList from e.stdin, processes it and writes the
// ResourceList (with results) to e.stdout, even when the function fails.
func runFn(e *env) error {
	rw := &kio.ByteReadWriter{
		Reader: e.stdin,
		Writer: e.stdout,
		// Items pass through exactly: add no index annotations, remove none.
		OmitReaderAnnotations: true,
		KeepReaderAnnotations: true,
	}
	p := &fnProcessor{}
	err := framework.Execute(p, rw)
	for _, r := range p.results {
		fmt.Fprintln(e.stderr, describeResult(r))
	}
	switch {
	case err == nil:
		return nil
	case errors.Is(err, errFnFindings):
		return &exitError{code: exitFindings}
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee
	}
	return &exitError{code: exitInput, msg: "fn: " + err.Error()}
}

// fnProcessor is kiln's framework.ResourceListProcessor.
type fnProcessor struct {
	results framework.Results
}

// Process validates the items or, for an App functionConfig, generates objects.
func (p *fnProcessor) Process(rl *framework.ResourceList) error {
	fc := rl.FunctionConfig
	if fc != nil && fc.YNode().Kind == yaml.MappingNode && len(fc.YNode().Content) == 0 {
		fc = nil // kustomize sends {} when there is no functionConfig
	}
	var apiVersion, kind string
	if fc != nil {
		if fc.YNode().Kind != yaml.MappingNode {
			return usageErrorf("functionConfig must be a mapping (kind Lint or App, apiVersion %s)", kilnAPIVersion)
		}
		apiVersion, kind = fc.GetApiVersion(), fc.GetKind()
	}
	switch {
	case fc == nil:
		return p.validate(rl, nil)
	case apiVersion == kilnAPIVersion && kind == lintKind:
		return p.validate(rl, fc)
	case apiVersion == kilnAPIVersion && kind == appKind:
		return p.generate(rl, fc)
	}
	return usageErrorf("functionConfig %s %s: kiln fn takes kind Lint (validator) or App (generator) with apiVersion %s", apiVersion, kind, kilnAPIVersion)
}

// validate lints the items and records the findings as results.
func (p *fnProcessor) validate(rl *framework.ResourceList, lintConfig *yaml.RNode) error {
	cfg, opts, threshold, err := lintSettings(lintConfig)
	if err != nil {
		return err
	}
	var objs []*manifest.Object
	files := map[*manifest.Object]*framework.File{}
	failed := false
	for i, item := range rl.Items {
		if isLocalConfig(item) {
			continue // kustomize's own inputs (a generator's App, this Lint): never applied, not linted
		}
		file, name := itemFile(item, i)
		doc := 0
		if file != nil {
			doc = file.Index
		}
		o, err := manifest.NewObject(name, doc, -1, item.YNode())
		if err != nil {
			p.add(rl, &framework.Result{Severity: framework.Error, Message: err.Error(), File: file})
			failed = true
			continue
		}
		if file != nil {
			files[o] = file
		}
		objs = append(objs, o)
	}
	compiled, specErrs := compileSpecs(objs)
	for _, err := range specErrs {
		p.add(rl, &framework.Result{Severity: framework.Error, Message: err.Error()})
		failed = true
	}
	res, err := lintObjects(compiled, nil, cfg, opts)
	if err != nil {
		return &exitError{code: exitInput, msg: err.Error()}
	}
	p.addFindings(rl, res, files)
	if failed || failsAt(res, threshold) {
		return errFnFindings
	}
	return nil
}

// generate compiles the App in fc and appends its objects to the items.
func (p *fnProcessor) generate(rl *framework.ResourceList, fc *yaml.RNode) error {
	spec := fc.Copy()
	// The spec is the user's file as kustomize read it: drop what kustomize added.
	for k := range spec.GetAnnotations() {
		if k == "config.kubernetes.io/function" || k == "config.kubernetes.io/local-config" ||
			strings.HasPrefix(k, "internal.config.kubernetes.io/") || strings.HasPrefix(k, "config.k8s.io/") ||
			k == kioutil.LegacyPathAnnotation || k == kioutil.LegacyIndexAnnotation || k == kioutil.LegacyIdAnnotation {
			if _, err := spec.Pipe(yaml.ClearAnnotation(k)); err != nil {
				return err
			}
		}
	}
	if err := yaml.ClearEmptyAnnotations(spec); err != nil {
		return err
	}
	file, _, _ := kioutil.GetFileAnnotations(fc)
	if file == "" {
		file = "functionConfig"
	}
	app, err := manifest.NewObject(file, 0, -1, spec.YNode())
	if err != nil {
		return &exitError{code: exitInput, msg: err.Error()}
	}
	cfg, opts, threshold, err := lintSettings(nil)
	if err != nil {
		return err
	}
	objs, errs := compileSpecs([]*manifest.Object{app})
	if len(errs) > 0 {
		manifest.SortErrors(errs)
		msgs := make([]string, len(errs))
		for i, e := range errs {
			msgs[i] = e.Error()
		}
		return &exitError{code: exitInput, msg: strings.Join(msgs, "\n")}
	}
	res, err := lintObjects(objs, nil, cfg, opts)
	if err != nil {
		return &exitError{code: exitInput, msg: err.Error()}
	}
	p.addFindings(rl, res, nil)
	for _, o := range objs {
		rl.Items = append(rl.Items, yaml.NewRNode(o.Node()))
	}
	if failsAt(res, threshold) {
		return errFnFindings
	}
	return nil
}

func (p *fnProcessor) add(rl *framework.ResourceList, r *framework.Result) {
	rl.Results = append(rl.Results, r)
	p.results = append(p.results, r)
}

// addFindings turns every unsuppressed finding into a result.
func (p *fnProcessor) addFindings(rl *framework.ResourceList, res *rules.Result, files map[*manifest.Object]*framework.File) {
	byRef := map[manifest.Ref]*framework.File{}
	for o, f := range files {
		byRef[o.Ref()] = f
	}
	for _, f := range res.Active() {
		r := &framework.Result{
			Severity: resultSeverity(f.Severity),
			Message:  f.Rule + ": " + f.Message,
			ResourceRef: &yaml.ResourceIdentifier{
				TypeMeta: yaml.TypeMeta{APIVersion: f.Object.APIVersion, Kind: f.Object.Kind},
				NameMeta: yaml.NameMeta{Name: f.Object.Name, Namespace: f.Object.Namespace},
			},
			Tags: map[string]string{"rule": f.Rule},
		}
		if f.Field != "" {
			r.Field = &framework.Field{Path: f.Field}
		}
		if f.Fix != nil {
			// What kiln fix would do, for the function's caller to show.
			r.Tags["fix"] = f.Fix.Describe()
		}
		r.File = byRef[f.Object]
		p.add(rl, r)
	}
}

func resultSeverity(s rules.Severity) framework.Severity {
	switch s {
	case rules.Error:
		return framework.Error
	case rules.Warning:
		return framework.Warning
	}
	return framework.Info
}

// itemFile reads where an item came from: internal.config.kubernetes.io/path
// and index (or their legacy config.kubernetes.io forms); nil without a path.
// name is what kiln calls the item in messages: the path, or items[i].
func itemFile(item *yaml.RNode, i int) (file *framework.File, name string) {
	path, index, _ := kioutil.GetFileAnnotations(item)
	if path == "" {
		return nil, fmt.Sprintf("items[%d]", i)
	}
	file = &framework.File{Path: path}
	if n, err := strconv.Atoi(index); err == nil {
		file.Index = n
	}
	return file, path
}

// isLocalConfig reports whether an item is marked config.kubernetes.io/local-config: "true".
func isLocalConfig(item *yaml.RNode) bool {
	return item.GetAnnotations()["config.kubernetes.io/local-config"] == "true"
}

// describeResult formats a result for stderr: file[index]: [severity] ref field: message.
func describeResult(r *framework.Result) string {
	s := r.String()
	if r.File != nil && r.File.Path != "" {
		return fmt.Sprintf("%s[%d]: %s", r.File.Path, r.File.Index, s)
	}
	return s
}

// lintSettings resolves a Lint functionConfig's spec (nil for none) like
// kiln lint resolves its flags: over the config file; spec.rules add to
// the config's rules.
func lintSettings(fc *yaml.RNode) (*rules.Config, *rules.Options, rules.Severity, error) {
	var spec *yaml.Node
	if fc != nil {
		if f := fc.Field("spec"); f != nil {
			spec = f.Value.YNode()
		}
	}
	given, err := settings.FromSpec(spec)
	if err != nil {
		return nil, nil, 0, usageErrorf("%v", err)
	}
	s, cfg, opts, err := loadSettings(given, nil)
	if err != nil {
		return nil, nil, 0, err
	}
	return cfg, opts, s.Threshold(), nil
}
