package cel

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/client-go/informers"
	corelisters "k8s.io/client-go/listers/core/v1"

	"github.com/kilnhq/kiln/manifest"
)

// The offline cluster state every admission policy engine reads, shared
// with the mutating one (admit/mutate), so that both see the same
// Namespaces, params, equivalent resources and authorizer answers.

// NamespaceLister is the API server's namespace lister over the Namespaces
// among objs (each labelled with its name, as the server labels it; a
// Namespace that is not there is answered as an empty one).
func NamespaceLister(objs []*manifest.Object) corelisters.NamespaceLister {
	return newNamespaces(objs, nil)
}

// ParamInformer is the informer of a policy's paramKind over the objects
// of that group and kind among objs, converted to the paramKind's version
// (namespaced ones without a namespace land in "default").
func ParamInformer(res manifest.Resource, objs []*manifest.Object) informers.GenericInformer {
	return paramsAmong(res, objs, nil)
}

// Authorizer answers every check of a policy's CEL authorizer the same way:
// allowed for "allow", denied otherwise (--authorizer).
func Authorizer(setting string) authorizer.UnconditionalAuthorizer {
	return fixedAuthorizer{allow: setting == "allow"}
}

// EquivalentResources maps a resource to the resources of the same kind in
// other versions and groups through the kind table (matchPolicy Equivalent).
func EquivalentResources(kinds *manifest.Kinds) runtime.EquivalentResourceMapper {
	return &objectInterfaces{kinds: kinds}
}
