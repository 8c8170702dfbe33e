package objdiff

import (
	"fmt"
	"sort"
	"strings"
)

// Report is what a change deploys differently: the objects of each app
// (the unit that deploys them) added, removed and changed, with the
// findings each change introduces and fixes.
type Report struct {
	// Base and Head name the two sides ("main (1a2b3c4)", "working tree").
	Base string `json:"base"`
	Head string `json:"head"`
	Apps []App  `json:"apps"`
}

// App is one unit that deploys objects (what rendered them, else the
// directory of their files) and what changed in it.
type App struct {
	Name    string   `json:"name"`
	Objects []Object `json:"objects"`
}

// Object is one object that differs between the sides: added, removed,
// changed (Changes are its fields), or unchanged with findings that
// differ (what it is judged in changed around it).
type Object struct {
	APIVersion string    `json:"apiVersion"`
	Kind       string    `json:"kind"`
	Namespace  string    `json:"namespace,omitempty"`
	Name       string    `json:"name"`
	Op         Op        `json:"op"`
	Changes    []Change  `json:"changes,omitempty"`
	Introduced []Finding `json:"introduced,omitempty"`
	Fixed      []Finding `json:"fixed,omitempty"`
}

// Unchanged is the Op of an object whose content is the same on both
// sides but whose findings are not.
const Unchanged Op = "unchanged"

// Finding is a finding an object has on one side only, by the key the
// baseline knows it by (rule, field, message without positions).
type Finding struct {
	Rule     string `json:"rule"`
	Severity string `json:"severity"`
	Field    string `json:"field,omitempty"`
	Message  string `json:"message"`
}

// Empty reports whether the sides deploy the same objects, judged alike.
func (r *Report) Empty() bool { return len(r.Apps) == 0 }

// Sort orders the apps by name and each app's objects by kind, namespace
// and name, so that the output is the same on every run.
func (r *Report) Sort() {
	sort.Slice(r.Apps, func(i, j int) bool { return r.Apps[i].Name < r.Apps[j].Name })
	for _, a := range r.Apps {
		sort.SliceStable(a.Objects, func(i, j int) bool {
			x, y := a.Objects[i], a.Objects[j]
			if x.Kind != y.Kind {
				return x.Kind < y.Kind
			}
			if x.Namespace != y.Namespace {
				return x.Namespace < y.Namespace
			}
			if x.Name != y.Name {
				return x.Name < y.Name
			}
			return x.APIVersion < y.APIVersion
		})
	}
}

// Counts are an app's objects by what happened to them and its findings
// by what the change did to them.
type Counts struct {
	Added, Removed, Changed int
	// Introduced counts the new findings by severity ("error",
	// "warning", "info"); Fixed those gone.
	Introduced, Fixed map[string]int
}

// Count counts the app's objects and findings.
func (a *App) Count() Counts {
	c := Counts{Introduced: map[string]int{}, Fixed: map[string]int{}}
	for _, o := range a.Objects {
		switch o.Op {
		case Added:
			c.Added++
		case Removed:
			c.Removed++
		case Changed:
			c.Changed++
		}
		for _, f := range o.Introduced {
			c.Introduced[f.Severity]++
		}
		for _, f := range o.Fixed {
			c.Fixed[f.Severity]++
		}
	}
	return c
}

func total(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// Verdict is the app's one line: what the cluster would say of the change.
func (a *App) Verdict() string {
	c := a.Count()
	var parts []string
	for _, sev := range []string{"error", "warning", "info"} {
		if n := c.Introduced[sev]; n > 0 {
			parts = append(parts, plural(n, "new "+sev))
		}
	}
	if len(parts) == 0 {
		parts = append(parts, "no new findings")
	}
	if n := total(c.Fixed); n > 0 {
		parts = append(parts, plural(n, "finding")+" fixed")
	}
	return strings.Join(parts, ", ")
}

// Changes says what happened to the app's objects: "1 added, 2 changed".
func (c Counts) Changes() string {
	var parts []string
	for _, p := range []struct {
		n    int
		what string
	}{{c.Added, "added"}, {c.Removed, "removed"}, {c.Changed, "changed"}} {
		if p.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", p.n, p.what))
		}
	}
	if len(parts) == 0 {
		return "findings only"
	}
	return strings.Join(parts, ", ")
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// ref names the object: "apps/v1 Deployment podinfo/podinfo".
func (o *Object) ref() string {
	name := o.Name
	if o.Namespace != "" {
		name = o.Namespace + "/" + name
	}
	return o.APIVersion + " " + o.Kind + " " + name
}
