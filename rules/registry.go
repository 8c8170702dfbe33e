package rules

import (
	"sort"
	"sync"
)

var (
	registryMu sync.Mutex
	registry   []*Checker
	// offByDefault are the registered rules that are off unless the
	// config turns them on (Rule.Off).
	offByDefault = map[string]bool{}
)

// Register adds a checker to the set every run uses. Rule packages call it
// from init; the CLI imports them for their side effect.
func Register(c *Checker) {
	registryMu.Lock()
	defer registryMu.Unlock()
	registry = append(registry, c)
	for _, r := range c.Rules {
		if r.Off {
			offByDefault[r.ID] = true
		}
	}
}

// isOffByDefault reports whether a registered rule is off unless the config turns it on.
func isOffByDefault(id string) bool {
	registryMu.Lock()
	defer registryMu.Unlock()
	return offByDefault[id]
}

// Registered returns the registered checkers sorted by name.
func Registered() []*Checker {
	registryMu.Lock()
	defer registryMu.Unlock()
	out := append([]*Checker(nil), registry...)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// AllRules returns the rules the registered checkers know up front (Rules
// and Declares), sorted by ID.
func AllRules() []*Rule {
	var out []*Rule
	for _, c := range Registered() {
		out = append(append(out, c.Rules...), c.Declares...)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}
