package storage

type ResourceConfig struct {
	GroupVersionConfigs map[schema.GroupVersion]bool
	ResourceConfigs     map[schema.GroupVersionResource]bool
}

func (o *ResourceConfig) EnableVersions(versions ...schema.GroupVersion) {
	for _, version := range versions {
		o.GroupVersionConfigs[version] = true
	}
}

func (o *ResourceConfig) VersionEnabled(version schema.GroupVersion) bool {
	enabled, _ := o.GroupVersionConfigs[version]
	return enabled
}

func (o *ResourceConfig) ResourceEnabled(resource schema.GroupVersionResource) bool {
	if !o.VersionEnabled(resource.GroupVersion()) {
		return false
	}
	resourceEnabled, explicitlySet := o.ResourceConfigs[resource]
	if !explicitlySet {
		return true
	}
	return resourceEnabled
}
