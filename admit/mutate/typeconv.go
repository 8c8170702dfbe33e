package mutate

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	openapinamer "k8s.io/apiserver/pkg/endpoints/openapi"
	"k8s.io/kube-openapi/pkg/builder3"
	"k8s.io/kube-openapi/pkg/common"
	openapiutil "k8s.io/kube-openapi/pkg/util"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	generatedopenapi "k8s.io/kubernetes/pkg/generated/openapi"
)

// typeConverters is the patch.TypeConverterManager of the built-in kinds:
// server-side apply's structured-merge-diff types of a kind, built from
// k8s.io/kubernetes' generated OpenAPI definitions as kube-apiserver builds
// its OpenAPI v3 models (DefaultOpenAPIV3Config, the scheme's definition
// namer, builder3), once per kind a policy mutates.
type typeConverters struct {
	byKind sync.Map // schema.GroupVersionKind → *typeConverter
}

type typeConverter struct {
	once sync.Once
	tc   managedfields.TypeConverter
}

// openAPIConfig is kube-apiserver's OpenAPI v3 configuration of the
// built-in types (server.DefaultOpenAPIV3Config without the HTTP parts).
var openAPIConfig = sync.OnceValue(func() *common.OpenAPIV3Config {
	namer := openapinamer.NewDefinitionNamer(legacyscheme.Scheme)
	cfg := &common.OpenAPIV3Config{
		Info:              &spec.Info{InfoProps: spec.InfoProps{Title: "Kubernetes"}},
		GetDefinitionName: namer.GetDefinitionName,
		GetDefinitions:    generatedopenapi.GetOpenAPIDefinitions,
	}
	cfg.Definitions = generatedopenapi.GetOpenAPIDefinitions(func(name string) spec.Ref {
		defName, _ := cfg.GetDefinitionName(name)
		return spec.MustCreateRef("#/components/schemas/" + common.EscapeJsonPointer(defName))
	})
	return cfg
})

// GetTypeConverter returns the type converter of a built-in kind, nil for
// any other (the dispatcher then answers as the server does for a kind
// whose schema it does not have).
func (t *typeConverters) GetTypeConverter(gvk schema.GroupVersionKind) managedfields.TypeConverter {
	v, _ := t.byKind.LoadOrStore(gvk, &typeConverter{})
	e := v.(*typeConverter)
	e.once.Do(func() { e.tc = builtinTypeConverter(gvk) })
	return e.tc
}

// Run implements patch.TypeConverterManager: the models are static.
func (t *typeConverters) Run(context.Context) {}

func builtinTypeConverter(gvk schema.GroupVersionKind) managedfields.TypeConverter {
	obj, err := legacyscheme.Scheme.New(gvk)
	if err != nil {
		return nil
	}
	models, err := builder3.BuildOpenAPIDefinitionsForResources(openAPIConfig(), openapiutil.GetCanonicalTypeName(obj))
	if err != nil {
		return nil
	}
	tc, err := managedfields.NewTypeConverter(models, false)
	if err != nil {
		return nil
	}
	return tc
}
