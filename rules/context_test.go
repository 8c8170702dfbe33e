package rules

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/kilnhq/kiln/manifest"
)

const contextObjects = `apiVersion: v1
kind: Namespace
metadata: {name: shop}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: p}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: b}
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: fast}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: params, namespace: shop}
`

// TestCheckersSeeWhatTheyRequire: each checker's Pass.Objects are the
// context objects of the contexts it requires and no others; params (any
// other kind) come with Policies.
func TestCheckersSeeWhatTheyRequire(t *testing.T) {
	objs := parse(t, "ctx.yaml", contextObjects)
	seen := map[string][]string{}
	probe := func(name string, requires ...Context) *Checker {
		return &Checker{Name: name, Requires: requires, Prepare: func(p *Pass) (Judge, error) {
			for _, o := range p.Objects {
				seen[name] = append(seen[name], o.Kind)
			}
			return nil, nil
		}}
	}
	checkers := []*Checker{
		probe("nothing"),
		probe("namespaces", Namespaces),
		probe("crds", CRDs),
		probe("policies", Policies),
		probe("classes", StorageClasses),
		probe("two", Namespaces, StorageClasses),
	}
	for _, c := range checkers { // one at a time: Prepare runs concurrently
		if _, err := (&Engine{Checkers: []*Checker{c}}).Run(objs, nil); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string][]string{
		"namespaces": {"Namespace"},
		"crds":       {"CustomResourceDefinition"},
		"policies":   {"ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding", "ConfigMap"},
		"classes":    {"StorageClass"},
		"two":        {"Namespace", "StorageClass"},
	}
	for _, c := range checkers {
		if !slices.Equal(seen[c.Name], want[c.Name]) {
			t.Errorf("%s saw %v, want %v", c.Name, seen[c.Name], want[c.Name])
		}
	}
	if got := Required(checkers); len(got) != 4 || !got.Has("", "Namespace") || got.Has("", "ConfigMap") {
		t.Errorf("Required = %v, want the four contexts (ConfigMap in none)", got)
	}
}

// TestGiven: a checker gets the objects the engine's Given reads for a
// context it requires, and asking for one it does not require is a bug.
func TestGiven(t *testing.T) {
	given := parse(t, "classes.yaml", "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: slow}\n")
	readErr := errors.New("policies.yaml: cannot read")
	var asked []Context
	eng := &Engine{Given: func(c Context) ([]*manifest.Object, []error) {
		asked = append(asked, c)
		if c == Policies {
			return nil, []error{readErr}
		}
		return given, nil
	}}
	var got []*manifest.Object
	var errs []error
	eng.Checkers = []*Checker{{Name: "classes", Requires: []Context{StorageClasses, Policies}, Prepare: func(p *Pass) (Judge, error) {
		got, _ = p.Given(StorageClasses)
		_, errs = p.Given(Policies)
		return nil, nil
	}}}
	if _, err := eng.Run(nil, nil); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Name != "slow" || len(errs) != 1 || errs[0] != readErr {
		t.Errorf("Given: objects %v, errors %v", got, errs)
	}
	if !slices.Equal(asked, []Context{StorageClasses, Policies}) {
		t.Errorf("the engine's Given was asked for %v", asked)
	}

	defer func() {
		r := recover()
		if r == nil || !strings.Contains(r.(string), "does not require") {
			t.Errorf("Given of a context not required: recover() = %v, want a panic", r)
		}
	}()
	// The one checker prepares on the caller's goroutine, where the panic
	// can be seen.
	eng.Checkers = []*Checker{{Name: "sneaky", Prepare: func(p *Pass) (Judge, error) {
		p.Given(StorageClasses)
		return nil, nil
	}}}
	eng.Run(nil, nil)
}
