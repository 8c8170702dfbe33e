package rest

import (
	widgetsapiv1 "k8s.io/api/widgets/v1"
	widgetsapiv1beta1 "k8s.io/api/widgets/v1beta1"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/kubernetes/pkg/apis/widgets"
	"k8s.io/kubernetes/pkg/features"
)

type RESTStorageProvider struct{}

func (p RESTStorageProvider) NewRESTStorage(apiResourceConfigSource serverstorage.APIResourceConfigSource) (genericapiserver.APIGroupInfo, error) {
	apiGroupInfo := genericapiserver.NewDefaultAPIGroupInfo(widgets.GroupName)
	if storageMap, err := p.v1Storage(apiResourceConfigSource); err != nil {
		return genericapiserver.APIGroupInfo{}, err
	} else if len(storageMap) > 0 {
		apiGroupInfo.VersionedResourcesStorageMap[widgetsapiv1.SchemeGroupVersion.Version] = storageMap
	}
	// Named for v1alpha1, builds v1beta1's map (as 1.31's networking provider).
	if storageMap, err := p.v1alpha1Storage(apiResourceConfigSource); err != nil {
		return genericapiserver.APIGroupInfo{}, err
	} else if len(storageMap) > 0 {
		apiGroupInfo.VersionedResourcesStorageMap[widgetsapiv1beta1.SchemeGroupVersion.Version] = storageMap
	}
	return apiGroupInfo, nil
}

func (p RESTStorageProvider) v1Storage(apiResourceConfigSource serverstorage.APIResourceConfigSource) (map[string]rest.Storage, error) {
	storage := map[string]rest.Storage{}
	if resource := "widgets"; apiResourceConfigSource.ResourceEnabled(widgetsapiv1.SchemeGroupVersion.WithResource(resource)) {
		widgetStorage, widgetStatusStorage, err := widgetstore.NewREST()
		if err != nil {
			return storage, err
		}
		storage[resource] = widgetStorage
		storage[resource+"/status"] = widgetStatusStorage
	}
	if resource := "gadgets"; apiResourceConfigSource.ResourceEnabled(widgetsapiv1.SchemeGroupVersion.WithResource(resource)) {
		if utilfeature.DefaultFeatureGate.Enabled(features.Gadgets) {
			storage[resource] = gadgetstore.NewREST()
		} else {
			klog.Warning("Gadget storage is disabled because the Gadgets feature gate is disabled")
		}
	}
	return storage, nil
}

func (p RESTStorageProvider) v1alpha1Storage(apiResourceConfigSource serverstorage.APIResourceConfigSource) (map[string]rest.Storage, error) {
	storage := map[string]rest.Storage{}
	if resource := "widgets"; apiResourceConfigSource.ResourceEnabled(widgetsapiv1beta1.SchemeGroupVersion.WithResource(resource)) {
		storage[resource] = widgetstore.NewREST()
	}
	if resource := "gadgets"; apiResourceConfigSource.ResourceEnabled(widgetsapiv1beta1.SchemeGroupVersion.WithResource(resource)) {
		storage[resource] = gadgetstore.NewREST()
	}
	if sprocketStorage, err := sprocketstore.NewREST(); err != nil {
		return nil, err
	} else {
		storage["sprockets"] = sprocketStorage
	}
	return storage, nil
}

func (p RESTStorageProvider) GroupName() string {
	return widgets.GroupName
}
