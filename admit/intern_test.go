package admit

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	apiextensionshelpers "k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensions "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	sigyaml "sigs.k8s.io/yaml"
)

// TestShareCRDSchemas: sharing a CRD schema's equal subtrees leaves the
// structural schema and the OpenAPI schema the validators are built from
// equal to what the server builds, and makes them smaller (fewer distinct
// property maps). The JobSet CRD kiln ships holds a pod template's schema;
// argo-workflows' Workflow CRD (../shared/realworld, when present) holds a
// container's schema dozens of times.
func TestShareCRDSchemas(t *testing.T) {
	cases := []struct {
		name    string
		json    []byte
		version string
		atMost  float64 // distinct maps after / before
	}{
		{"jobset", jobSetCRD, "v1alpha2", 0.5},
	}
	argo := filepath.Join("..", "..", "shared", "realworld", "argo-workflows", "manifests", "base", "crds", "full", "argoproj.io_workflows.yaml")
	if y, err := os.ReadFile(argo); err == nil {
		j, err := sigyaml.YAMLToJSON(y)
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases, struct {
			name    string
			json    []byte
			version string
			atMost  float64
		}{"argo-workflows Workflow", j, "v1alpha1", 0.15})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			props := crdSchema(t, c.json, c.version)
			want, err := structuralschema.NewStructural(props)
			if err != nil {
				t.Fatal(err)
			}
			got := want.DeepCopy()
			before := distinctMaps(reflect.ValueOf(got), map[uintptr]bool{})
			share(got)
			if !reflect.DeepEqual(got, want) {
				t.Fatal("the shared structural schema differs from the server's")
			}
			after := distinctMaps(reflect.ValueOf(got), map[uintptr]bool{})
			if float64(after) > c.atMost*float64(before) {
				t.Errorf("structural: %d distinct maps of %d after sharing, want at most %.0f%%", after, before, 100*c.atMost)
			}

			_, wantOpenAPI, err := apiservervalidation.NewSchemaValidator(props)
			if err != nil {
				t.Fatal(err)
			}
			gotOpenAPI, err := openAPISchema(props)
			if err != nil {
				t.Fatal(err)
			}
			before = distinctMaps(reflect.ValueOf(wantOpenAPI), map[uintptr]bool{})
			if !reflect.DeepEqual(gotOpenAPI, wantOpenAPI) {
				t.Fatal("the shared OpenAPI schema differs from the server's")
			}
			after = distinctMaps(reflect.ValueOf(gotOpenAPI), map[uintptr]bool{})
			if float64(after) > c.atMost*float64(before) {
				t.Errorf("OpenAPI: %d distinct maps of %d after sharing, want at most %.0f%%", after, before, 100*c.atMost)
			}
		})
	}
}

// TestShareKeepsDifferences: subtrees that differ anywhere, however deep
// (a pattern, a CEL rule, a list type, nil against empty), stay apart;
// equal ones become one.
func TestShareKeepsDifferences(t *testing.T) {
	leaf := func(pattern string) structuralschema.Structural {
		s := structuralschema.Structural{Generic: structuralschema.Generic{Type: "string"}}
		if pattern != "" {
			s.ValueValidation = &structuralschema.ValueValidation{Pattern: pattern}
		}
		return s
	}
	node := func(inner structuralschema.Structural) structuralschema.Structural {
		return structuralschema.Structural{
			Generic: structuralschema.Generic{Type: "object"},
			Properties: map[string]structuralschema.Structural{
				"a": {Generic: structuralschema.Generic{Type: "object"}, Properties: map[string]structuralschema.Structural{"b": inner}},
			},
		}
	}
	listType := "set"
	withRule := leaf("")
	withRule.XValidations = apiextensionsv1.ValidationRules{{Rule: "self != ''"}}
	withList := structuralschema.Structural{Generic: structuralschema.Generic{Type: "array"}, Items: &structuralschema.Structural{Generic: structuralschema.Generic{Type: "string"}}}
	withSetList := withList
	withSetList.Extensions.XListType = &listType
	emptyRequired := leaf("")
	emptyRequired.ValueValidation = &structuralschema.ValueValidation{Required: []string{}}
	nilRequired := leaf("")
	nilRequired.ValueValidation = &structuralschema.ValueValidation{}

	root := &structuralschema.Structural{
		Generic: structuralschema.Generic{Type: "object"},
		Properties: map[string]structuralschema.Structural{
			"plain": node(leaf("")), "plain2": node(leaf("")),
			"pattern": node(leaf("^a")), "pattern2": node(leaf("^b")),
			"rule": node(withRule),
			"list": node(withList), "set": node(withSetList),
			"empty": node(emptyRequired), "nil": node(nilRequired),
		},
	}
	want := root.DeepCopy()
	share(root)
	if !reflect.DeepEqual(root, want) {
		t.Fatal("sharing changed the schema")
	}
	inner := func(name string) uintptr {
		return uintptr(reflect.ValueOf(root.Properties[name].Properties).UnsafePointer())
	}
	if inner("plain") != inner("plain2") {
		t.Error("equal subtrees were not shared")
	}
	for _, pair := range [][2]string{{"plain", "pattern"}, {"pattern", "pattern2"}, {"plain", "rule"}, {"list", "set"}, {"empty", "nil"}, {"plain", "nil"}} {
		if inner(pair[0]) == inner(pair[1]) {
			t.Errorf("%s and %s differ but were shared", pair[0], pair[1])
		}
	}
}

// crdSchema returns the internal schema of a CRD's version without its
// documentation, as crdSet.version builds its validators from.
func crdSchema(t *testing.T, data []byte, version string) *apiextensions.JSONSchemaProps {
	t.Helper()
	crd, errs := decodeCRD(data)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	v1 := &apiextensionsv1.CustomResourceDefinition{}
	if err := legacyscheme.Scheme.Convert(crd, v1, nil); err != nil {
		t.Fatal(err)
	}
	val, err := apiextensionshelpers.GetSchemaForVersion(v1, version)
	if err != nil || val == nil {
		t.Fatalf("no schema for %s: %v", version, err)
	}
	iv := &apiextensions.CustomResourceValidation{}
	if err := apiextensionsv1.Convert_v1_CustomResourceValidation_To_apiextensions_CustomResourceValidation(val, iv, nil); err != nil {
		t.Fatal(err)
	}
	withoutDocs(iv.OpenAPIV3Schema)
	return iv.OpenAPIV3Schema
}

// distinctMaps counts the distinct maps a value holds (each counted once
// however many places hold it).
func distinctMaps(v reflect.Value, seen map[uintptr]bool) int {
	n := 0
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			n += distinctMaps(v.Elem(), seen)
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			n += distinctMaps(v.Index(i), seen)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			n += distinctMaps(v.Field(i), seen)
		}
	case reflect.Map:
		if v.IsNil() || seen[uintptr(v.UnsafePointer())] {
			return 0
		}
		seen[uintptr(v.UnsafePointer())] = true
		n++
		for it := v.MapRange(); it.Next(); {
			n += distinctMaps(it.Value(), seen)
		}
	}
	return n
}
