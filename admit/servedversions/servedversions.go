// Package servedversions says which group/version/kinds a kube-apiserver
// serves by default at each Kubernetes minor kiln supports. The table,
// zz_generated.go, is generated from the Kubernetes sources of each release
// by tools/servedversions (CONTRIBUTING.md, "Add a Kubernetes
// version"); kiln reads it, never the network.
package servedversions

//go:generate go run ../gen/servedversions -o zz_generated.go

import (
	"slices"

	"github.com/kilnhq/kiln/manifest"
)

// Span is a range of Kubernetes 1.x minors, both ends included; the zero
// Span is none.
type Span struct{ From, To int }

// Has reports whether kube is in the span.
func (s Span) Has(kube manifest.KubeVersion) bool {
	return s != (Span{}) && kube.Major == 1 && s.From <= kube.Minor && kube.Minor <= s.To
}

// Empty reports whether the span holds no minor.
func (s Span) Empty() bool { return s == Span{} }

// Entry is one group/version/kind of the built-in API.
type Entry struct {
	Group, Version, Kind string
	// Resource is the resource that serves the kind.
	Resource string
	// Exists is when the release has the version at all (some only when the
	// cluster enables them); Served is when it serves it by default.
	Exists, Served Span
}

// APIVersion is the entry's apiVersion (group/version, or v1 for the core group).
func (e Entry) APIVersion() string {
	if e.Group == "" {
		return e.Version
	}
	return e.Group + "/" + e.Version
}

type groupKind struct{ group, kind string }

var (
	byGVK  = map[[3]string]int{}
	byKind = map[groupKind][]int{}
	groups = map[string]bool{}
)

func init() {
	for i, e := range table {
		byGVK[[3]string{e.Group, e.Version, e.Kind}] = i
		gk := groupKind{e.Group, e.Kind}
		byKind[gk] = append(byKind[gk], i)
		groups[e.Group] = true
	}
}

// Table returns every entry, by group, kind, then version (the version the
// API server prefers first: GA, beta, alpha, newest first).
func Table() []Entry { return slices.Clone(table) }

// Lookup returns the entry of group/version/kind.
func Lookup(group, version, kind string) (Entry, bool) {
	i, ok := byGVK[[3]string{group, version, kind}]
	if !ok {
		return Entry{}, false
	}
	return table[i], true
}

// Versions returns the entries of a kind in a group, the preferred version
// first.
func Versions(group, kind string) []Entry {
	var out []Entry
	for _, i := range byKind[groupKind{group, kind}] {
		out = append(out, table[i])
	}
	return out
}

// HasGroup reports whether some release has the group.
func HasGroup(group string) bool { return groups[group] }
