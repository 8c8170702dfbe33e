package policytest

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/kilnhq/kiln/admit/mutate"
	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules/cel"
)

// DefaultOptions are kiln test's: MutatingAdmissionPolicies evaluated by
// the server's own dispatcher and patchers (package admit/mutate).
func DefaultOptions() Options {
	return Options{Mutator: NewMutator()}
}

// NewMutator returns the Mutator kiln test runs: package admit/mutate, the
// server's mutating admission code. It compiles a suite's policies once, at
// its first request.
func NewMutator() Mutator {
	return &serverMutator{suites: map[suiteKey]*compiled{}}
}

// ErrCannotEvaluate is wrapped by a Mutator's error that is not the
// server's denial but a request kiln cannot mutate as the server would: the
// case ends in error, never passes.
var ErrCannotEvaluate = errors.New("cannot evaluate mutations")

type serverMutator struct {
	mu     sync.Mutex
	suites map[suiteKey]*compiled
}

// suiteKey names a suite by its policies and context (Run hands the same
// slices to every case of a suite).
type suiteKey struct {
	policies, context *manifest.Object
	np, nc            int
}

type compiled struct {
	m        *mutate.Mutator
	problems []string
}

func keyOf(policies, context []*manifest.Object) suiteKey {
	k := suiteKey{np: len(policies), nc: len(context)}
	if len(policies) > 0 {
		k.policies = policies[0]
	}
	if len(context) > 0 {
		k.context = context[0]
	}
	return k
}

// Mutate implements Mutator.
func (s *serverMutator) Mutate(policies, context []*manifest.Object, req cel.Request) (map[string]any, error) {
	s.mu.Lock()
	c := s.suites[keyOf(policies, context)]
	if c == nil {
		c = compile(policies, context)
		s.suites[keyOf(policies, context)] = c
	}
	s.mu.Unlock()
	if len(c.problems) > 0 {
		return nil, fmt.Errorf("%w: %s", ErrCannotEvaluate, strings.Join(c.problems, "; "))
	}
	if c.m == nil || req.Object == nil {
		if req.Object == nil {
			return nil, nil
		}
		return req.Object.Content()
	}
	out, err := c.m.Evaluate(req)
	var u *mutate.UnsupportedError
	if errors.As(err, &u) {
		return nil, fmt.Errorf("%w: %s", ErrCannotEvaluate, u.Msg)
	}
	return out, err
}

// compile loads the suite's mutating policies with its context (params,
// Namespaces, CRDs). What the server would not run as written (a binding
// without its policy, a policy defined twice) makes every case of the
// suite unevaluable rather than silently different.
func compile(policies, context []*manifest.Object) *compiled {
	var objs []*manifest.Object
	for _, o := range context {
		if !mutate.IsPolicyObject(o) { // the policies come from policies only
			objs = append(objs, o)
		}
	}
	objs = append(objs, policies...)
	kinds := manifest.BuiltinKinds()
	kinds.AddCRDs(objs)
	c := &compiled{}
	c.m = mutate.ForRequests(objs, kinds, mutate.Options{}, func(o *manifest.Object, p manifest.Problem) {
		pos := ""
		if o != nil {
			pos = o.Pos().String() + ": "
		}
		c.problems = append(c.problems, pos+p.Message)
	})
	return c
}
