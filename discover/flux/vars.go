package flux

import (
	"encoding/base64"
	"fmt"
	"sort"
	"strings"

	"github.com/kilnhq/kiln/discover"
	"github.com/kilnhq/kiln/manifest"
)

// variables returns the variables postBuild.substituteFrom gives a
// Kustomization, as kustomize-controller's LoadVariables reads them (in
// order, a later source's keys over an earlier's; newlines dropped), from
// the ConfigMaps and Secrets its tree rendered so far, else the input's.
// A value kiln cannot know (a SOPS-encrypted Secret's) stays as written,
// ${NAME}; a source it cannot find is said once.
func (r *run) variables(k *kustomization, treeObjs []*object) (map[string]string, []error) {
	pb, _ := k.spec()["postBuild"].(map[string]any)
	from, _ := pb["substituteFrom"].([]any)
	if len(from) == 0 {
		return nil, nil
	}
	vars := map[string]string{}
	var notes []error
	for _, x := range from {
		ref, _ := x.(map[string]any)
		kind, name := str(ref, "kind"), str(ref, "name")
		optional, _ := ref["optional"].(bool)
		o, ambiguous := r.lookup(kind, k.obj.namespace(), name, treeObjs)
		what := fmt.Sprintf("%s %s/%s", kind, k.obj.namespace(), name)
		switch {
		case o == nil && optional:
			continue
		case o == nil && ambiguous:
			notes = append(notes, &manifest.Error{Pos: k.obj.pos, Msg: fmt.Sprintf("note: flux: Kustomization %s substitutes from %s, which the input defines differently in more than one place and none the Kustomization's tree builds; the variables it sets are left as written", k.id(), what)})
			continue
		case o == nil:
			notes = append(notes, &manifest.Error{Pos: k.obj.pos, Msg: fmt.Sprintf("note: flux: Kustomization %s substitutes from %s, which is not in the input; the variables it sets are unknown to kiln (kustomize-controller fails the Kustomization while it is missing)", k.id(), what)})
			continue
		}
		switch kind {
		case "ConfigMap":
			data, _ := o.content["data"].(map[string]any)
			for n, v := range data {
				if s, ok := v.(string); ok {
					vars[n] = strings.ReplaceAll(s, "\n", "")
				}
			}
		case "Secret":
			values, sops := secretValues(o)
			if sops {
				names := make([]string, 0, len(values))
				for n := range values {
					vars[n] = "${" + n + "}"
					names = append(names, n)
				}
				sort.Strings(names)
				notes = append(notes, &manifest.Error{Pos: o.pos, Msg: fmt.Sprintf("note: flux: Secret %s is SOPS-encrypted; kiln cannot know the values it gives Kustomization %s (%s): they are left as written", o.namespace()+"/"+o.name(), k.id(), "${"+strings.Join(names, "}, ${")+"}")})
				continue
			}
			for n, v := range values {
				vars[n] = strings.ReplaceAll(v, "\n", "")
			}
		}
	}
	return vars, notes
}

// lookup returns the ConfigMap or Secret namespace/name that the tree
// rendered (the last), else the input's when the input defines one (or
// copies alike); ambiguous when it defines several that differ.
func (r *run) lookup(kind, namespace, name string, treeObjs []*object) (*object, bool) {
	match := func(o *object) bool {
		ns := o.namespace()
		return o.kind() == kind && o.apiVersion() == "v1" && o.name() == name && (ns == namespace || ns == "")
	}
	for i := len(treeObjs) - 1; i >= 0; i-- {
		if match(treeObjs[i]) {
			return treeObjs[i], false
		}
	}
	r.readInput()
	var found *object
	for _, o := range r.input {
		if !match(o) {
			continue
		}
		if found != nil && !sameContent(found, o) {
			return nil, true
		}
		found = o
	}
	return found, false
}

// readInput reads the ConfigMaps and Secrets of the input files and units.
func (r *run) readInput() {
	if r.read {
		return
	}
	r.read = true
	for _, f := range r.in.Files {
		if r.in.Marks[f]&discover.MarkConfig == 0 {
			continue
		}
		for _, o := range readFile(f) {
			if k := o.kind(); k == "ConfigMap" || k == "Secret" {
				r.input = append(r.input, o)
			}
		}
	}
	for _, u := range r.in.Units {
		for _, o := range u.Source.Objects {
			if o.APIVersion == "v1" && (o.Kind == "ConfigMap" || o.Kind == "Secret") {
				if x := fromManifest(o); x != nil {
					r.input = append(r.input, x)
				}
			}
		}
	}
}

func sameContent(a, b *object) bool {
	return fmt.Sprint(a.content["data"], a.content["stringData"]) == fmt.Sprint(b.content["data"], b.content["stringData"])
}

// secretValues returns a Secret's values (data decoded, stringData over
// it, as the API server stores them), and whether SOPS encrypted them
// (a sops stanza, or values that are ENC[...]).
func secretValues(o *object) (map[string]string, bool) {
	out := map[string]string{}
	_, sops := o.content["sops"]
	data, _ := o.content["data"].(map[string]any)
	for n, v := range data {
		s, _ := v.(string)
		if strings.HasPrefix(s, "ENC[") {
			sops = true
		}
		if b, err := base64.StdEncoding.DecodeString(s); err == nil {
			out[n] = string(b)
		} else {
			out[n] = s
		}
	}
	sd, _ := o.content["stringData"].(map[string]any)
	for n, v := range sd {
		s, _ := v.(string)
		if strings.HasPrefix(s, "ENC[") {
			sops = true
		}
		out[n] = s
	}
	return out, sops
}
