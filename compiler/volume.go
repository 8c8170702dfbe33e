package compiler

import (
	"sort"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// claims emits a PersistentVolumeClaim for every shared volume, by name.
func (e *emitter) claims() []*yaml.Node {
	var out []*yaml.Node
	for _, name := range sortedKeys(e.app.Spec.Volumes) {
		sh := e.app.Spec.Volumes[name].Shared
		if sh == nil {
			continue
		}
		path := "spec.volumes." + name + ".shared"
		p := e.at(path)
		spec := mapping(p,
			field{"accessModes", strs(e.at(path+".accessMode"), []string{sh.AccessMode})},
		)
		if sh.StorageClass != "" {
			add(spec, field{"storageClassName", str(e.at(path+".storageClass"), sh.StorageClass)})
		}
		sp := e.at(path + ".size")
		add(spec, field{"resources", mapping(sp, field{"requests", mapping(sp, field{"storage", quantity(sp, sh.Size)})})})
		out = append(out, object(e.at("spec.volumes."+name), "v1", "PersistentVolumeClaim", e.metadata(e.at("spec.volumes."+name), name, true, nil), spec))
	}
	return out
}

// podVolumes returns the pod volumes for the spec volumes named in used,
// plus kiln's writable /tmp emptyDir when withTmp, sorted by name.
func (e *emitter) podVolumes(p pos, used map[string]bool, withTmp bool) *yaml.Node {
	names := make([]string, 0, len(used)+1)
	for n := range used {
		names = append(names, n)
	}
	if withTmp {
		names = append(names, tmpVolume)
	}
	if len(names) == 0 {
		return nil
	}
	sort.Strings(names)
	out := seq(p)
	for _, name := range names {
		if name == tmpVolume && withTmp {
			out.Content = append(out.Content, mapping(p, field{"name", str(p, tmpVolume)}, field{"emptyDir", mapping(p)}))
			continue
		}
		path := "spec.volumes." + name
		vp := e.at(path)
		v := e.app.Spec.Volumes[name]
		item := mapping(vp, field{"name", str(vp, name)})
		switch {
		case v.Scratch != nil:
			sp := e.at(path + ".scratch")
			ed := mapping(sp)
			if v.Scratch.Medium != "" {
				add(ed, field{"medium", str(e.at(path+".scratch.medium"), v.Scratch.Medium)})
			}
			if v.Scratch.SizeLimit != "" {
				add(ed, field{"sizeLimit", quantity(e.at(path+".scratch.sizeLimit"), v.Scratch.SizeLimit)})
			}
			add(item, field{"emptyDir", ed})
		case v.Shared != nil:
			add(item, field{"persistentVolumeClaim", mapping(vp, field{"claimName", str(vp, name)})})
		case v.Claim != nil:
			cp := e.at(path + ".claim")
			pvc := mapping(cp, field{"claimName", str(e.at(path+".claim.name"), v.Claim.Name)})
			if v.Claim.ReadOnly {
				add(pvc, field{"readOnly", boolean(e.at(path+".claim.readOnly"), true)})
			}
			add(item, field{"persistentVolumeClaim", pvc})
		}
		out.Content = append(out.Content, item)
	}
	return out
}

// readOnlyVolume reports whether mounts of the volume must be read-only.
func (e *emitter) readOnlyVolume(name string) bool {
	v := e.app.Spec.Volumes[name]
	return v != nil && v.Claim != nil && v.Claim.ReadOnly
}
