package rules

import (
	"fmt"

	"github.com/kilnhq/kiln/manifest"
)

// Context is a kind of object a checker prepares with, which the engine's
// caller reads before any object is judged (kiln lint's first pass) and the
// engine hands to the checkers that require it, as go/analysis hands an
// analyzer the results it Requires. A checker lists its contexts in
// Checker.Requires; its Pass.Objects holds the input's objects of those
// contexts, and Pass.Given the ones the user names beside the input.
type Context int

// The contexts a checker can require.
const (
	// Namespaces are the input's Namespaces.
	Namespaces Context = iota + 1
	// CRDs are the input's CustomResourceDefinitions.
	CRDs
	// Policies are the input's ValidatingAdmissionPolicies,
	// MutatingAdmissionPolicies and their bindings, the
	// MutatingWebhookConfigurations,
	// and the objects the bindings name as params (of any kind);
	// Pass.Given(Policies) are the objects of the --policy files.
	Policies
	// StorageClasses are the input's StorageClasses;
	// Pass.Given(StorageClasses) are those of the --storage-classes file.
	StorageClasses
)

// String names the context as a user reads it.
func (c Context) String() string {
	switch c {
	case Namespaces:
		return "Namespaces"
	case CRDs:
		return "CustomResourceDefinitions"
	case Policies:
		return "admission policies, bindings and params"
	case StorageClasses:
		return "StorageClasses"
	}
	return fmt.Sprintf("context %d", int(c))
}

// ContextOf returns the context that objects of a group and kind belong
// to, 0 for every other kind (a param is of any kind: which objects are
// params, the bindings say).
func ContextOf(group, kind string) Context {
	switch group + "/" + kind {
	case "/Namespace":
		return Namespaces
	case "apiextensions.k8s.io/CustomResourceDefinition":
		return CRDs
	case "admissionregistration.k8s.io/ValidatingAdmissionPolicy",
		"admissionregistration.k8s.io/ValidatingAdmissionPolicyBinding",
		"admissionregistration.k8s.io/MutatingAdmissionPolicy",
		"admissionregistration.k8s.io/MutatingAdmissionPolicyBinding",
		"admissionregistration.k8s.io/MutatingWebhookConfiguration":
		return Policies
	case "storage.k8s.io/StorageClass":
		return StorageClasses
	}
	return 0
}

// Contexts is a set of contexts.
type Contexts map[Context]bool

// Required returns the contexts that any of the checkers requires: what a
// first pass reads.
func Required(checkers []*Checker) Contexts {
	out := Contexts{}
	for _, c := range checkers {
		for _, x := range c.Requires {
			out[x] = true
		}
	}
	return out
}

// Has reports whether objects of the group and kind are in one of the
// contexts (params are not: they are read once the bindings are known).
func (cs Contexts) Has(group, kind string) bool {
	c := ContextOf(group, kind)
	return c != 0 && cs[c]
}

// requires reports whether the checker lists the context.
func (c *Checker) requires(x Context) bool {
	for _, r := range c.Requires {
		if r == x {
			return true
		}
	}
	return false
}

// contextFor returns the context objects the checker requires, in order:
// those of its contexts' kinds and, if it requires Policies, every object
// of no context kind (the engine's caller passes only params as such).
func contextFor(c *Checker, ctx []*manifest.Object) []*manifest.Object {
	if len(c.Requires) == 0 {
		return nil
	}
	var out []*manifest.Object
	for _, o := range ctx {
		x := ContextOf(o.Group(), o.Kind)
		if x == 0 {
			x = Policies
		}
		if c.requires(x) {
			out = append(out, o)
		}
	}
	return out
}

// Given returns the objects the user named for a context the checker
// requires, beside the input: the --policy files for Policies, the
// --storage-classes file for StorageClasses (none for the others). The
// engine's caller reads them once per run (Engine.Given) and admits the
// --policy objects with the context; checkers read them and never change
// them. errs are the files' read and parse problems, each with its
// position.
func (p *Pass) Given(c Context) ([]*manifest.Object, []error) {
	if !p.checker.requires(c) {
		panic(fmt.Sprintf("checker %s asked for the given %s, which it does not require", p.checker.Name, c))
	}
	if p.given == nil {
		return nil, nil
	}
	return p.given(c)
}
