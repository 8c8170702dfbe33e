package mutate

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission/plugin/policy/mutating"
	"k8s.io/apiserver/pkg/admission/plugin/policy/mutating/patch"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
)

// record collects, during one request, what each binding's patchers
// changed (in the order first changed).
type record struct {
	kind  schema.GroupVersionKind
	order []string
	by    map[string]*change
}

type recordKey struct{}

// changes returns what each binding changed, in the order it first did.
func (r *record) changes() []change {
	out := make([]change, 0, len(r.order))
	for _, k := range r.order {
		c := *r.by[k]
		sort.Strings(c.fields)
		out = append(out, c)
	}
	return out
}

func (r *record) add(policy, binding string, fields []string) {
	if len(fields) == 0 {
		return
	}
	key := policy + "\x00" + binding
	if r.by == nil {
		r.by = map[string]*change{}
	}
	c := r.by[key]
	if c == nil {
		c = &change{policy: policy, binding: binding}
		r.by[key] = c
		r.order = append(r.order, key)
	}
	seen := map[string]bool{}
	for _, f := range c.fields {
		seen[f] = true
	}
	for _, f := range fields {
		if !seen[f] {
			c.fields = append(c.fields, f)
		}
	}
}

// recording returns the evaluator with each patcher recording, under the
// policy's and binding's names, which fields it changed.
func recording(e mutating.PolicyEvaluator, policy, binding string) mutating.PolicyEvaluator {
	out := e
	out.Mutators = make([]patch.Patcher, len(e.Mutators))
	for i, p := range e.Mutators {
		out.Mutators[i] = recorder{p, policy, binding}
	}
	return out
}

type recorder struct {
	patch.Patcher
	policy, binding string
}

// Patch runs the upstream patcher and records the fields it changed.
func (r recorder) Patch(ctx context.Context, req patch.Request, budget int64) (runtime.Object, error) {
	before := req.VersionedAttributes.VersionedObject.Object()
	after, err := r.Patcher.Patch(ctx, req, budget)
	if rec, ok := ctx.Value(recordKey{}).(*record); ok && err == nil && after != nil {
		rec.add(r.policy, r.binding, changedFields(before, after, req.VersionedAttributes.VersionedKind))
	}
	return after, err
}

// changedFields lists the paths of the leaves that differ between two
// versions of an object (each compared as the typed object of kind gvk, so
// that a patch's unstructured result compares like with like).
func changedFields(before, after runtime.Object, gvk schema.GroupVersionKind) []string {
	a, b := unstructuredOf(before, gvk), unstructuredOf(after, gvk)
	if a == nil || b == nil {
		return nil
	}
	var out []string
	diff("", a, b, &out)
	return out
}

func unstructuredOf(obj runtime.Object, gvk schema.GroupVersionKind) map[string]any {
	if typed, err := legacyscheme.Scheme.ConvertToVersion(obj, gvk.GroupVersion()); err == nil {
		obj = typed
	}
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil
	}
	return u
}

// diff appends the paths at which a and b differ: the deepest map key or
// list index present on both sides, else where one side has a value the
// other has not.
func diff(path string, a, b any, out *[]string) {
	// A map or list on one side only: its leaves are what changed.
	switch {
	case a == nil && b != nil:
		a = emptyLike(b)
	case b == nil && a != nil:
		b = emptyLike(a)
	}
	switch av := a.(type) {
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok {
			break
		}
		keys := map[string]bool{}
		for k := range av {
			keys[k] = true
		}
		for k := range bv {
			keys[k] = true
		}
		sorted := make([]string, 0, len(keys))
		for k := range keys {
			sorted = append(sorted, k)
		}
		sort.Strings(sorted)
		for _, k := range sorted {
			diff(join(path, k), av[k], bv[k], out)
		}
		return
	case []any:
		bv, ok := b.([]any)
		if !ok || len(av) != len(bv) {
			break
		}
		for i := range av {
			diff(path+"["+strconv.Itoa(i)+"]", av[i], bv[i], out)
		}
		return
	}
	if !reflect.DeepEqual(a, b) {
		*out = append(*out, path)
	}
}

// join adds a key to a field path as kiln writes paths
// (metadata.labels["app.kubernetes.io/name"] for keys that are not names).
func join(path, key string) string {
	if strings.ContainsAny(key, "./[]\" ") || key == "" {
		key = fmt.Sprintf("[%q]", key)
		return path + key
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

// emptyLike is an empty map for a map, nil for anything else.
func emptyLike(v any) any {
	if _, ok := v.(map[string]any); ok {
		return map[string]any{}
	}
	return nil
}
