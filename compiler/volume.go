package compiler

import (
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

// podVolumes returns the pod volumes the containers use: spec volumes,
// configs and Secrets, kiln's /tmp and /dev/shm emptyDirs, sorted by name.
func (e *emitter) podVolumes(p, shmAt pos, vols *podVolumes) *yaml.Node {
	items := map[string]*yaml.Node{}
	for name := range vols.spec {
		items[name] = e.specVolume(name)
	}
	for name, ref := range vols.refs {
		if ref.Config != "" {
			items[name] = mapping(p, field{"name", str(p, name)}, field{"configMap", mapping(p, field{"name", str(p, ref.Config)})})
		} else {
			items[name] = mapping(p, field{"name", str(p, name)}, field{"secret", mapping(p, field{"secretName", str(p, ref.Secret)})})
		}
	}
	if vols.tmp {
		items[tmpVolume] = mapping(p, field{"name", str(p, tmpVolume)}, field{"emptyDir", mapping(p)})
	}
	if vols.shm != nil {
		sp := shmAt
		ed := mapping(sp, field{"medium", str(sp, "Memory")})
		if *vols.shm != "" {
			add(ed, field{"sizeLimit", quantity(sp, *vols.shm)})
		}
		items[shmVolume] = mapping(sp, field{"name", str(sp, shmVolume)}, field{"emptyDir", ed})
	}
	if len(items) == 0 {
		return nil
	}
	out := seq(p)
	for _, name := range sortedKeys(items) {
		out.Content = append(out.Content, items[name])
	}
	return out
}

// specVolume is the pod volume of spec volume name.
func (e *emitter) specVolume(name string) *yaml.Node {
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
	return item
}

// readOnlyVolume reports whether mounts of the volume must be read-only.
func (e *emitter) readOnlyVolume(name string) bool {
	v := e.app.Spec.Volumes[name]
	return v != nil && v.Claim != nil && v.Claim.ReadOnly
}
