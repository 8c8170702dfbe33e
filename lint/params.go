package lint

import (
	"bytes"
	"strings"

	"github.com/kilnhq/kiln/manifest"
)

// paramRefs are the params the bindings in the input name, by the group
// and kind of their policy's paramKind: the names (a binding's
// paramRef.name), or every object of the kind when a binding selects
// params by labels or names none.
type paramRefs map[string]*paramNames

type paramNames struct {
	all   bool
	names map[string]bool
}

// paramRefsOf reads the paramKinds of the policies and the paramRefs of
// the bindings among objs.
func paramRefsOf(objs []*manifest.Object) paramRefs {
	kindOf := map[string]string{} // policy kind and name → group/kind of its params
	for _, o := range objs {
		if o.Group() != "admissionregistration.k8s.io" || (o.Kind != "ValidatingAdmissionPolicy" && o.Kind != "MutatingAdmissionPolicy") {
			continue
		}
		content, err := o.Content()
		if err != nil {
			continue
		}
		pk, _ := at(content, "spec", "paramKind").(map[string]any)
		apiVersion, _ := pk["apiVersion"].(string)
		kind, _ := pk["kind"].(string)
		if kind == "" {
			continue
		}
		s := manifest.Scanned{APIVersion: apiVersion, Kind: kind}
		kindOf[o.Kind+"/"+o.Name] = s.Group() + "/" + kind
	}
	refs := paramRefs{}
	for _, o := range objs {
		policyKind, ok := strings.CutSuffix(o.Kind, "Binding")
		if o.Group() != "admissionregistration.k8s.io" || !ok || (policyKind != "ValidatingAdmissionPolicy" && policyKind != "MutatingAdmissionPolicy") {
			continue
		}
		content, err := o.Content()
		if err != nil {
			continue
		}
		policy, _ := at(content, "spec", "policyName").(string)
		gk, ok := kindOf[policyKind+"/"+policy]
		if !ok {
			continue
		}
		names := refs[gk]
		if names == nil {
			names = &paramNames{names: map[string]bool{}}
			refs[gk] = names
		}
		ref, _ := at(content, "spec", "paramRef").(map[string]any)
		if name, _ := ref["name"].(string); name != "" {
			names.names[name] = true
		} else {
			names.all = true
		}
	}
	return refs
}

// at returns the value at a path of maps, or nil.
func at(m map[string]any, path ...string) any {
	var v any = m
	for _, k := range path {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = mm[k]
	}
	return v
}

// coveredBy reports whether every param r names, early names too.
func (r paramRefs) coveredBy(early paramRefs) bool {
	for gk, n := range r {
		e := early[gk]
		switch {
		case e == nil:
			return false
		case e.all:
			continue
		case n.all:
			return false
		}
		for name := range n.names {
			if !e.names[name] {
				return false
			}
		}
	}
	return true
}

// anyKindIn reports whether a file that holds the kinds may hold a param.
func (r paramRefs) anyKindIn(kinds map[string]bool) bool {
	for gk := range r {
		if kinds[gk] {
			return true
		}
	}
	return false
}

// wantsScanned reports whether a scanned document may be a param: of a
// param kind, and naming one of the params if the bindings name them.
func (r paramRefs) wantsScanned(s manifest.Scanned) bool {
	n := r[s.Group()+"/"+s.Kind]
	if n == nil {
		return false
	}
	if n.all {
		return true
	}
	for name := range n.names {
		if bytes.Contains(s.Text, []byte(name)) {
			return true
		}
	}
	return false
}

// wants reports whether an object is a param a binding names.
func (r paramRefs) wants(o *manifest.Object) bool {
	n := r[o.Group()+"/"+o.Kind]
	return n != nil && (n.all || n.names[o.Name])
}
