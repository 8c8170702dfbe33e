package cel

import (
	"reflect"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/value"
)

// paramObject is one param as the API server's informer holds it, an
// *unstructured.Unstructured, whose unstructured form for CEL is computed
// once instead of on every evaluation.
//
// The server turns params into the CEL variable `params` with
// common.SchemalessTypedToVal, which converts an Unstructured through a
// JSON round trip (structured-merge-diff's TypeReflectCacheEntry.ToUnstructured)
// each time an expression is evaluated. paramObject implements
// value.UnstructuredConverterWithError, so SchemalessTypedToVal takes the
// result of that same round trip, done once, and the CEL value is identical.
type paramObject struct {
	*unstructured.Unstructured

	once sync.Once
	form any
	err  error
}

var _ value.UnstructuredConverterWithError = (*paramObject)(nil)

func newParamObject(u *unstructured.Unstructured) *paramObject {
	return &paramObject{Unstructured: u}
}

// ToUnstructuredWithError returns what the server's conversion of the
// embedded Unstructured gives.
func (p *paramObject) ToUnstructuredWithError() (any, error) {
	p.once.Do(func() { p.form, p.err = serverForm(p.Unstructured) })
	return p.form, p.err
}

// serverForm converts u the way common.SchemalessTypedToVal does for a
// pointer to a json.Marshaler.
func serverForm(u *unstructured.Unstructured) (any, error) {
	v := reflect.ValueOf(u)
	if !v.CanAddr() {
		ptr := reflect.New(v.Type())
		ptr.Elem().Set(v)
		v = ptr.Elem()
	}
	return value.TypeReflectEntryOf(v.Type()).ToUnstructured(v)
}
