// Package objdiff compares what two revisions of a repository deploy:
// each object's content field by field (Fields: YAML paths, lists of named
// items such as containers, env and volumes matched by name, not index,
// like dyff), Secret values replaced by hash markers (Masker), and the
// comparison of whole revisions grouped by the unit that deploys them
// (Report), written as text, Markdown or JSON (Write). It knows nothing of
// how the objects were rendered: session/diff.go renders both sides and
// names each object's app.
package objdiff

import (
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
)

// Op is what happened to a field.
type Op string

// The ops of a Change.
const (
	Added   Op = "added"
	Removed Op = "removed"
	Changed Op = "changed"
)

// Change is one field that differs: its YAML path and its values before
// and after (nil for a field added or removed).
type Change struct {
	Path string `json:"path"`
	Op   Op     `json:"op"`
	Old  any    `json:"old,omitempty"`
	New  any    `json:"new,omitempty"`
}

// nameKeys are the fields that name the items of a list, in the order they
// are tried: the first that every item of both lists has as a scalar, with
// no two items of a list alike, matches the items.
var nameKeys = []string{"name", "key", "id", "mountPath", "devicePath", "containerPort", "port", "ip", "type"}

// Fields compares two decoded objects and returns each field that differs,
// in the order of the old object's fields then the new one's (map keys
// sorted). Maps are compared key by key, lists of named items item by item
// by name (their order does not count), other lists index by index.
func Fields(old, new map[string]any) []Change {
	var out []Change
	diffValue(&out, "", old, new)
	return out
}

func diffValue(out *[]Change, path string, a, b any) {
	switch av := a.(type) {
	case map[string]any:
		if bv, ok := b.(map[string]any); ok {
			diffMap(out, path, av, bv)
			return
		}
	case []any:
		if bv, ok := b.([]any); ok {
			diffList(out, path, av, bv)
			return
		}
	}
	if !equal(a, b) {
		*out = append(*out, Change{Path: rootPath(path), Op: Changed, Old: a, New: b})
	}
}

func rootPath(p string) string {
	if p == "" {
		return "."
	}
	return p
}

func diffMap(out *[]Change, path string, a, b map[string]any) {
	for _, k := range sortedKeys(a) {
		p := join(path, k)
		if bv, ok := b[k]; ok {
			diffValue(out, p, a[k], bv)
		} else {
			*out = append(*out, Change{Path: p, Op: Removed, Old: a[k]})
		}
	}
	for _, k := range sortedKeys(b) {
		if _, ok := a[k]; !ok {
			*out = append(*out, Change{Path: join(path, k), Op: Added, New: b[k]})
		}
	}
}

func diffList(out *[]Change, path string, a, b []any) {
	if key := nameKey(a, b); key != "" {
		index := map[string]int{}
		for i, item := range b {
			index[scalar(item.(map[string]any)[key])] = i
		}
		seen := map[string]bool{}
		for _, item := range a {
			name := scalar(item.(map[string]any)[key])
			p := path + "[" + key + "=" + name + "]"
			seen[name] = true
			if j, ok := index[name]; ok {
				diffValue(out, p, item, b[j])
			} else {
				*out = append(*out, Change{Path: p, Op: Removed, Old: item})
			}
		}
		for _, item := range b {
			name := scalar(item.(map[string]any)[key])
			if !seen[name] {
				*out = append(*out, Change{Path: path + "[" + key + "=" + name + "]", Op: Added, New: item})
			}
		}
		return
	}
	for i := range max(len(a), len(b)) {
		p := path + "[" + strconv.Itoa(i) + "]"
		switch {
		case i >= len(a):
			*out = append(*out, Change{Path: p, Op: Added, New: b[i]})
		case i >= len(b):
			*out = append(*out, Change{Path: p, Op: Removed, Old: a[i]})
		default:
			diffValue(out, p, a[i], b[i])
		}
	}
}

// nameKey is the field that names the items of both lists, "" for none.
func nameKey(a, b []any) string {
	if len(a)+len(b) == 0 {
		return ""
	}
keys:
	for _, k := range nameKeys {
		for _, list := range [][]any{a, b} {
			seen := map[string]bool{}
			for _, item := range list {
				m, ok := item.(map[string]any)
				if !ok {
					return ""
				}
				v, ok := m[k]
				if !ok || !isScalar(v) || seen[scalar(v)] {
					continue keys
				}
				seen[scalar(v)] = true
			}
		}
		return k
	}
	return ""
}

func isScalar(v any) bool {
	switch v.(type) {
	case map[string]any, []any, nil:
		return false
	}
	return true
}

func scalar(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return fmt.Sprint(v)
}

// join appends a map key to a path: plain keys after a dot, others
// (dots, slashes, spaces: annotation and label keys) quoted in brackets.
func join(path, key string) string {
	plain := key != ""
	for _, r := range key {
		if !(r == '_' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			plain = false
			break
		}
	}
	if !plain {
		return path + "[" + strconv.Quote(key) + "]"
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// equal compares two decoded values; numbers compare by value whatever
// their Go type (an int and an int64 of a rendered and a read object).
func equal(a, b any) bool {
	if fa, ok := number(a); ok {
		if fb, ok := number(b); ok {
			return fa == fb
		}
	}
	return reflect.DeepEqual(a, b)
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case int32:
		return float64(n), true
	case uint64:
		return float64(n), true
	case float64:
		return n, true
	case float32:
		return float64(n), true
	}
	return 0, false
}

// Equal reports whether two decoded objects hold the same content.
func Equal(a, b map[string]any) bool {
	var out []Change
	diffValue(&out, "", a, b)
	return len(out) == 0
}

// lines splits a multi-line string value for a line diff.
func lines(s string) []string { return strings.SplitAfter(s, "\n") }
