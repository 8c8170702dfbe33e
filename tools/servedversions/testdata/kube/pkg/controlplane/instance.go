package controlplane

import (
	apiv1 "k8s.io/api/core/v1"
	widgetsv1 "k8s.io/api/widgets/v1"
	widgetsv1beta1 "k8s.io/api/widgets/v1beta1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	serverstorage "k8s.io/apiserver/pkg/server/storage"
	corerest "k8s.io/kubernetes/pkg/registry/core/rest"
	widgetsrest "k8s.io/kubernetes/pkg/registry/widgets/rest"
)

var providers = []any{corerest.LegacyRESTStorageProvider{}, widgetsrest.RESTStorageProvider{}}

var (
	stableAPIGroupVersionsEnabledByDefault = []schema.GroupVersion{
		apiv1.SchemeGroupVersion,
		widgetsv1.SchemeGroupVersion,
	}
	legacyBetaEnabledByDefaultResources = []schema.GroupVersionResource{
		widgetsv1beta1.SchemeGroupVersion.WithResource("gadgets"),
		widgetsv1beta1.SchemeGroupVersion.WithResource("widgets"),
	}
	betaAPIGroupVersionsDisabledByDefault = []schema.GroupVersion{
		widgetsv1beta1.SchemeGroupVersion,
	}
)

func DefaultAPIResourceConfigSource() *serverstorage.ResourceConfig {
	ret := serverstorage.NewResourceConfig()
	ret.EnableVersions(stableAPIGroupVersionsEnabledByDefault...)
	ret.DisableVersions(betaAPIGroupVersionsDisabledByDefault...)
	ret.EnableResources(legacyBetaEnabledByDefaultResources...)
	return ret
}
