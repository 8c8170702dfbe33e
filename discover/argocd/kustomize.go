package argocd

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/kilnhq/kiln/discover"
	"github.com/kilnhq/kiln/internal/pathkey"
	"github.com/kilnhq/kiln/manifest"
	"sigs.k8s.io/kustomize/api/resource"
	sigsyaml "sigs.k8s.io/yaml"
)

// renderKustomize builds a kustomization of this repository with the
// Application's kustomize options written into it as the repo-server's
// `kustomize edit` commands write them.
func (r *run) renderKustomize(a *app, s *source, dir, name string) *discover.Unit {
	kfile := discover.KustomizationFile(dir)
	if kfile == "" {
		return r.failed(a, name, fmt.Sprintf("path %s holds no kustomization file (Argo CD's kustomize needs one)", shown(dir)))
	}
	var kdata []byte
	if k := s.Kustomize; k != nil {
		data, err := os.ReadFile(kfile)
		if err != nil {
			return r.failed(a, name, err.Error())
		}
		m := map[string]any{}
		if err := sigsyaml.Unmarshal(data, &m); err != nil {
			return r.failed(a, name, fmt.Sprintf("%s: %v", kfile, err))
		}
		if err := edit(m, k, dir); err != nil {
			return r.failed(a, name, err.Error())
		}
		if kdata, err = sigsyaml.Marshal(m); err != nil {
			return r.failed(a, name, err.Error())
		}
	}
	dest := a.spec.Spec.Destination.Namespace
	built := r.in.Build(discover.BuildRequest{
		Dir: dir, Kustomization: kdata, KustomizationFile: kfile, ReportAt: kfile, Unit: name,
		Transform: func(res *resource.Resource) error {
			if dest != "" && res.GetNamespace() == "" && namespaced(res.GetApiVersion(), res.GetKind()) {
				return res.SetNamespace(dest)
			}
			return nil
		},
	})
	built.Read[pathkey.Real(kfile)] = true
	switch {
	case built.Remote != "":
		r.out.Warnings = append(r.out.Warnings, &manifest.Error{Pos: built.RemotePos, Msg: "warning: argocd: remote base " + built.Remote + " is not fetched (kiln works offline); Application " + a.name() + " is not rendered"})
		return nil
	case built.Plugin != "":
		r.warn(a, "its kustomization needs a plugin or KRM function (%s), which kiln never runs; it is not rendered", built.Plugin)
		return nil
	}
	r.consume(built.Read)
	return &discover.Unit{Kind: UnitKind, Dir: name, Source: built.Source}
}

// edit applies an Application's kustomize options to a kustomization:
// namePrefix, nameSuffix, namespace and images set (`kustomize edit set
// ...`), commonLabels and commonAnnotations added over the file's
// (`edit add label|annotation --force`; labels without selector when
// labelWithoutSelector), replicas set by name, patches appended,
// components added unless there (a missing one is an error unless
// ignoreMissingComponents).
func edit(m map[string]any, k *kustSpec, dir string) error {
	if k.NamePrefix != "" {
		m["namePrefix"] = k.NamePrefix
	}
	if k.NameSuffix != "" {
		m["nameSuffix"] = k.NameSuffix
	}
	if k.Namespace != "" {
		m["namespace"] = k.Namespace
	}
	for _, img := range k.Images {
		setImage(m, img)
	}
	if len(k.CommonLabels) > 0 {
		if k.LabelWithoutSelector {
			labels, _ := m["labels"].([]any)
			m["labels"] = append(labels, map[string]any{"pairs": stringsAny(k.CommonLabels)})
		} else {
			m["commonLabels"] = mergeStrings(m["commonLabels"], k.CommonLabels)
		}
	}
	if len(k.CommonAnnotations) > 0 {
		m["commonAnnotations"] = mergeStrings(m["commonAnnotations"], k.CommonAnnotations)
	}
	for _, rp := range k.Replicas {
		count := rp.Count
		if s, ok := count.(string); ok {
			var n int
			if _, err := fmt.Sscan(s, &n); err != nil {
				return fmt.Errorf("kustomize.replicas %s: count %q is not a number", rp.Name, s)
			}
			count = n
		}
		list, _ := m["replicas"].([]any)
		found := false
		for _, x := range list {
			if e, ok := x.(map[string]any); ok && e["name"] == rp.Name {
				e["count"], found = count, true
			}
		}
		if !found {
			list = append(list, map[string]any{"name": rp.Name, "count": count})
		}
		m["replicas"] = list
	}
	if len(k.Patches) > 0 {
		patches, _ := m["patches"].([]any)
		m["patches"] = append(patches, k.Patches...)
	}
	for _, c := range k.Components {
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(c))); err != nil && !strings.Contains(c, "://") {
			if k.IgnoreMissingComponents {
				continue
			}
			return fmt.Errorf("kustomize.components: %s is not in %s", c, shown(dir))
		}
		list, _ := m["components"].([]any)
		has := false
		for _, x := range list {
			has = has || x == c
		}
		if !has {
			m["components"] = append(list, c)
		}
	}
	return nil
}

// setImage is `kustomize edit set image`: "name=newName:tag",
// "name:tag", "name@digest", "name=newName@digest" replace the entry of
// that name.
func setImage(m map[string]any, img string) {
	name, to, renamed := strings.Cut(img, "=")
	if !renamed {
		to = img
	}
	ref, digest, hasDigest := strings.Cut(to, "@")
	newName, tag := ref, ""
	if i := strings.LastIndex(ref, ":"); i > strings.LastIndex(ref, "/") {
		newName, tag = ref[:i], ref[i+1:]
	}
	if !renamed {
		name = newName
	}
	e := map[string]any{"name": name}
	if renamed && newName != name {
		e["newName"] = newName
	}
	if tag != "" {
		e["newTag"] = tag
	}
	if hasDigest {
		e["digest"] = digest
	}
	list, _ := m["images"].([]any)
	for i, x := range list {
		if old, ok := x.(map[string]any); ok && old["name"] == name {
			list[i] = e
			m["images"] = list
			return
		}
	}
	m["images"] = append(list, e)
}

func mergeStrings(old any, add map[string]string) map[string]any {
	out := map[string]any{}
	if m, ok := old.(map[string]any); ok {
		for k, v := range m {
			out[k] = v
		}
	}
	keys := make([]string, 0, len(add))
	for k := range add {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		out[k] = add[k]
	}
	return out
}

func stringsAny(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
