// Package krm runs kiln as a KRM function (kiln fn): a ResourceList in,
// a ResourceList out. With a Lint functionConfig (or none) it is a
// validator whose items are judged by a session like kiln lint's; with an
// App functionConfig, a generator of the compiled objects.
package krm

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules"
	"github.com/kilnhq/kiln/session"
	"github.com/kilnhq/kiln/session/settings"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// The functionConfig kinds kiln fn understands.
const (
	kilnAPIVersion = "kiln.dev/v1alpha1"
	lintKind       = "Lint"
	appKind        = "App"
)

// ErrFindings is a run whose results fail the function (exit 1): findings
// at the failOn level, or items that are not objects.
var ErrFindings = session.ErrFindings

// Error is a bad input or functionConfig (exit 2); its message is the
// user's to read as it is.
type Error struct{ Msg string }

func (e *Error) Error() string { return e.Msg }

func errorf(format string, args ...any) error { return &Error{Msg: fmt.Sprintf(format, args...)} }

// Run reads a ResourceList from in, processes it and writes the
// ResourceList (with results) to out, even when the function fails; each
// result is also said on log. It returns ErrFindings, an *Error, or
// another error for a ResourceList it cannot read or write.
func Run(in io.Reader, out, log io.Writer) error {
	rw := &kio.ByteReadWriter{
		Reader: in,
		Writer: out,
		// Items pass through exactly: add no index annotations, remove none.
		OmitReaderAnnotations: true,
		KeepReaderAnnotations: true,
	}
	p := &processor{}
	err := framework.Execute(p, rw)
	for _, r := range p.results {
		fmt.Fprintln(log, describeResult(r))
	}
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrFindings):
		return ErrFindings
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return fmt.Errorf("fn: %v", err)
}

// processor is kiln's framework.ResourceListProcessor.
type processor struct {
	results framework.Results
}

// Process validates the items or, for an App functionConfig, generates objects.
func (p *processor) Process(rl *framework.ResourceList) error {
	fc := rl.FunctionConfig
	if fc != nil && fc.YNode().Kind == yaml.MappingNode && len(fc.YNode().Content) == 0 {
		fc = nil // kustomize sends {} when there is no functionConfig
	}
	var apiVersion, kind string
	if fc != nil {
		if fc.YNode().Kind != yaml.MappingNode {
			return errorf("functionConfig must be a mapping (kind Lint or App, apiVersion %s)", kilnAPIVersion)
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
	return errorf("functionConfig %s %s: kiln fn takes kind Lint (validator) or App (generator) with apiVersion %s", apiVersion, kind, kilnAPIVersion)
}

// validate lints the items and records the findings as results.
func (p *processor) validate(rl *framework.ResourceList, lintConfig *yaml.RNode) error {
	s, err := newSession(lintConfig)
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
	x, err := s.Compile(objs)
	if err != nil {
		return &Error{Msg: err.Error()}
	}
	for _, err := range x.Errors {
		p.add(rl, &framework.Result{Severity: framework.Error, Message: err.Error()})
		failed = true
	}
	res, err := s.Judge(x.All, nil)
	if err != nil {
		return &Error{Msg: err.Error()}
	}
	p.addFindings(rl, res, files)
	if failed || s.Fails(res) {
		return ErrFindings
	}
	return nil
}

// generate compiles the App in fc and appends its objects to the items.
func (p *processor) generate(rl *framework.ResourceList, fc *yaml.RNode) error {
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
		return &Error{Msg: err.Error()}
	}
	s, err := newSession(nil)
	if err != nil {
		return err
	}
	x, err := s.Compile([]*manifest.Object{app})
	if err != nil {
		return &Error{Msg: err.Error()}
	}
	objs, errs := x.All, x.Errors
	if len(errs) > 0 {
		manifest.SortErrors(errs)
		msgs := make([]string, len(errs))
		for i, e := range errs {
			msgs[i] = e.Error()
		}
		return &Error{Msg: strings.Join(msgs, "\n")}
	}
	res, err := s.Judge(objs, nil)
	if err != nil {
		return &Error{Msg: err.Error()}
	}
	p.addFindings(rl, res, nil)
	for _, o := range objs {
		rl.Items = append(rl.Items, yaml.NewRNode(o.Node()))
	}
	if s.Fails(res) {
		return ErrFindings
	}
	return nil
}

func (p *processor) add(rl *framework.ResourceList, r *framework.Result) {
	rl.Results = append(rl.Results, r)
	p.results = append(p.results, r)
}

// addFindings turns every unsuppressed finding into a result.
func (p *processor) addFindings(rl *framework.ResourceList, res *rules.Result, files map[*manifest.Object]*framework.File) {
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

// newSession resolves a Lint functionConfig's spec (nil for none) like
// kiln lint resolves its flags: over the config file; spec.rules add to
// the config's rules.
func newSession(fc *yaml.RNode) (*session.Session, error) {
	var spec *yaml.Node
	if fc != nil {
		if f := fc.Field("spec"); f != nil {
			spec = f.Value.YNode()
		}
	}
	given, err := settings.FromSpec(spec)
	if err != nil {
		return nil, errorf("%v", err)
	}
	s, err := session.New(given, nil, nil)
	if err != nil {
		return nil, &Error{Msg: err.Error()}
	}
	return s, nil
}
