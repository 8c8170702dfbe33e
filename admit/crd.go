package admit

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"

	apiextensionshelpers "k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensions "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsinstall "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/install"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	structuralpruning "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apiextensions-apiserver/pkg/registry/customresource"
	"k8s.io/apiextensions-apiserver/pkg/registry/customresourcedefinition"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/apiserver/pkg/cel/environment"
	"k8s.io/apiserver/pkg/registry/rest"
	apiregistrationinstall "k8s.io/kube-aggregator/pkg/apis/apiregistration/install"
	"k8s.io/kube-aggregator/pkg/registry/apiservice"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"k8s.io/kubernetes/pkg/api/legacyscheme"

	"github.com/kilnhq/kiln/manifest"
)

func init() {
	// The API server serves CRDs and APIServices too (apiextensions-apiserver
	// and the aggregator run in the same process).
	apiextensionsinstall.Install(legacyscheme.Scheme)
	apiregistrationinstall.Install(legacyscheme.Scheme)
	createStrategies[schema.GroupKind{Group: apiextensions.GroupName, Kind: "CustomResourceDefinition"}] = customresourcedefinition.NewStrategy(legacyscheme.Scheme)
	createStrategies[schema.GroupKind{Group: "apiregistration.k8s.io", Kind: "APIService"}] = apiservice.NewStrategy(legacyscheme.Scheme)
}

// jobSetCRD is the JobSet CRD (jobset.x-k8s.io, v1alpha2) kiln compiles to,
// from kubernetes-sigs/jobset config/components/crd/bases (Apache-2.0,
// crds/jobset.x-k8s.io_jobsets.yaml), as JSON without descriptions
// (TestShippedCRDs keeps the two in step).
//
//go:embed crds/jobset.x-k8s.io_jobsets.json
var jobSetCRD []byte

// crdVersion is what the server builds to serve one version of a CRD.
type crdVersion struct {
	crd        *apiextensions.CustomResourceDefinition
	structural *structuralschema.Structural
	strategy   rest.RESTCreateStrategy
	served     bool
	// deprecation is the warning the server returns for every request to
	// a version the CRD marks deprecated ("" for none).
	deprecation string
	err         error
}

// crdSet holds the CRDs of a run: those in the input (valid ones: a CRD the
// server refuses serves nothing) and those kiln ships, which the input's
// replace.
type crdSet struct {
	a *Admitter
	// byGK maps a group and kind to its CRD as JSON (the input's, read when
	// the set is made, before any object is admitted; else the shipped one).
	byGK     map[schema.GroupKind][]byte
	mu       sync.Mutex
	versions map[schema.GroupVersionKind]*crdVersion
	invalid  map[schema.GroupKind]bool // CRDs the server would refuse
	shipped  map[schema.GroupKind][]byte
}

func newCRDSet(a *Admitter, objs []*manifest.Object) *crdSet {
	s := &crdSet{
		a:        a,
		byGK:     map[schema.GroupKind][]byte{},
		versions: map[schema.GroupVersionKind]*crdVersion{},
		invalid:  map[schema.GroupKind]bool{},
		shipped:  map[schema.GroupKind][]byte{{Group: "jobset.x-k8s.io", Kind: "JobSet"}: jobSetCRD},
	}
	for _, o := range objs {
		if o.APIVersion != "apiextensions.k8s.io/v1" || o.Kind != "CustomResourceDefinition" {
			continue
		}
		c, err := o.Content()
		if err != nil {
			continue
		}
		spec, _ := c["spec"].(map[string]any)
		names, _ := spec["names"].(map[string]any)
		group, _ := spec["group"].(string)
		kind, _ := names["kind"].(string)
		if data, err := json.Marshal(c); err == nil && kind != "" {
			s.byGK[schema.GroupKind{Group: group, Kind: kind}] = data
		}
	}
	for gk, data := range s.shipped {
		if _, in := s.byGK[gk]; !in {
			s.byGK[gk] = data
		}
	}
	return s
}

// handles reports whether some CRD defines the kind.
func (s *crdSet) handles(gvk schema.GroupVersionKind) bool {
	_, ok := s.byGK[gvk.GroupKind()]
	return ok
}

// crd returns the internal CRD of a kind, decoded and defaulted afresh (a
// large CRD's schemas are not held once its versions are built); nil with a
// reason when the server would not serve it.
func (s *crdSet) crd(gk schema.GroupKind) (*apiextensions.CustomResourceDefinition, error) {
	if s.invalid[gk] {
		return nil, fmt.Errorf("its CustomResourceDefinition is invalid (see the findings on it)")
	}
	crd, errs := decodeCRD(s.byGK[gk])
	if len(errs) > 0 {
		s.invalid[gk] = true
		return nil, fmt.Errorf("its CustomResourceDefinition is invalid (see the findings on it)")
	}
	return crd, nil
}

// withoutDocs clears, in a schema and the schemas it holds, what only
// documents it (description, title, example, external docs): the
// validators built from it need none of it, and a large CRD's descriptions
// are most of its size.
func withoutDocs(p *apiextensions.JSONSchemaProps) {
	if p == nil {
		return
	}
	p.Description, p.Title, p.Example, p.ExternalDocs = "", "", nil, nil
	if p.Items != nil {
		withoutDocs(p.Items.Schema)
		for i := range p.Items.JSONSchemas {
			withoutDocs(&p.Items.JSONSchemas[i])
		}
	}
	for _, list := range [][]apiextensions.JSONSchemaProps{p.AllOf, p.OneOf, p.AnyOf} {
		for i := range list {
			withoutDocs(&list[i])
		}
	}
	withoutDocs(p.Not)
	for _, m := range []map[string]apiextensions.JSONSchemaProps{p.Properties, p.PatternProperties, p.Definitions} {
		for k, v := range m {
			withoutDocs(&v)
			m[k] = v
		}
	}
	for _, b := range []*apiextensions.JSONSchemaPropsOrBool{p.AdditionalProperties, p.AdditionalItems} {
		if b != nil {
			withoutDocs(b.Schema)
		}
	}
	for k, d := range p.Dependencies {
		withoutDocs(d.Schema)
		p.Dependencies[k] = d
	}
}

// withoutSchemas returns what admitting a custom resource reads of a CRD
// once its validators are built (name, scope, versions served, whether it
// keeps unknown fields), copied so that nothing of the decoded CRD, whose
// schemas are most of a large CRD's size, stays reachable.
func withoutSchemas(c *apiextensions.CustomResourceDefinition) *apiextensions.CustomResourceDefinition {
	slim := &apiextensions.CustomResourceDefinition{}
	slim.Name = strings.Clone(c.Name)
	slim.Spec.Scope = c.Spec.Scope
	if c.Spec.PreserveUnknownFields != nil {
		keep := *c.Spec.PreserveUnknownFields
		slim.Spec.PreserveUnknownFields = &keep
	}
	for _, v := range c.Spec.Versions {
		slim.Spec.Versions = append(slim.Spec.Versions, apiextensions.CustomResourceDefinitionVersion{Name: strings.Clone(v.Name), Served: v.Served})
	}
	return slim
}

// decodeCRD decodes, defaults and validates a v1 CRD as the server's CRD
// create does.
func decodeCRD(data []byte) (*apiextensions.CustomResourceDefinition, []error) {
	v1 := &apiextensionsv1.CustomResourceDefinition{}
	if err := json.Unmarshal(data, v1); err != nil {
		return nil, []error{err}
	}
	legacyscheme.Scheme.Default(v1)
	internal := &apiextensions.CustomResourceDefinition{}
	if err := legacyscheme.Scheme.Convert(v1, internal, nil); err != nil {
		return nil, []error{err}
	}
	// Accepted names are the spec's on a fresh create without conflicts.
	internal.Status.AcceptedNames = internal.Spec.Names
	return internal, nil
}

// version returns what serves gvk, built once.
func (s *crdSet) version(gvk schema.GroupVersionKind) *crdVersion {
	s.mu.Lock()
	defer s.mu.Unlock()
	if v, ok := s.versions[gvk]; ok {
		return v
	}
	v := &crdVersion{}
	s.versions[gvk] = v
	crd, err := s.crd(gvk.GroupKind())
	if err != nil {
		v.err = err
		return v
	}
	v.crd = withoutSchemas(crd)
	for _, ver := range crd.Spec.Versions {
		if ver.Name == gvk.Version {
			v.served = ver.Served
			if ver.Deprecated {
				v.deprecation = deprecationWarning(crd, ver)
			}
		}
	}
	if v.served {
		v.err = v.build(crd, gvk)
	}
	return v
}

// build makes what the server builds to serve a served version: its
// structural schema (pruned of defaults, its equal subtrees shared) and the
// create strategy with the schema's validator and the subresources.
func (v *crdVersion) build(crd *apiextensions.CustomResourceDefinition, gvk schema.GroupVersionKind) error {
	v1 := &apiextensionsv1.CustomResourceDefinition{}
	if err := legacyscheme.Scheme.Convert(crd, v1, nil); err != nil {
		return err
	}
	props, err := versionSchema(v1, gvk.Version)
	if err != nil {
		return err
	}
	if props != nil {
		withoutDocs(props)
		if v.structural, err = prunedStructural(crd, props); err != nil {
			return err
		}
	}
	openapi, err := openAPISchema(props)
	if err != nil {
		return err
	}
	validator := apiservervalidation.NewSchemaValidatorFromOpenAPI(openapi)
	statusSpec, scaleSpec := subresources(v1, gvk.Version)
	var selectable []apiextensionsv1.SelectableField
	for _, ver := range v1.Spec.Versions {
		if ver.Name == gvk.Version {
			selectable = ver.SelectableFields
		}
	}
	v.strategy = customresource.NewStrategy(legacyscheme.Scheme, crd.Spec.Scope == apiextensions.NamespaceScoped, gvk,
		validator, nil, v.structural, statusSpec, scaleSpec, selectable)
	return nil
}

// versionSchema is a version's schema as the internal type (nil when it
// has none).
func versionSchema(v1 *apiextensionsv1.CustomResourceDefinition, version string) (*apiextensions.JSONSchemaProps, error) {
	val, err := apiextensionshelpers.GetSchemaForVersion(v1, version)
	if err != nil || val == nil {
		return nil, err
	}
	iv := &apiextensions.CustomResourceValidation{}
	if err := apiextensionsv1.Convert_v1_CustomResourceValidation_To_apiextensions_CustomResourceValidation(val, iv, nil); err != nil {
		return nil, err
	}
	return iv.OpenAPIV3Schema, nil
}

// prunedStructural is a schema's structural form, pruned of its defaults and
// with its equal subtrees shared; nil when the schema is not structural
// and the CRD preserves unknown fields (else an error).
func prunedStructural(crd *apiextensions.CustomResourceDefinition, props *apiextensions.JSONSchemaProps) (*structuralschema.Structural, error) {
	st, err := structuralschema.NewStructural(props)
	if err != nil && !preserveUnknown(crd) {
		return nil, fmt.Errorf("its schema is not structural: %v", err)
	}
	if st == nil {
		return nil, nil
	}
	st = st.DeepCopy()
	if err := structuraldefaulting.PruneDefaults(st); err != nil {
		return nil, err
	}
	share(st)
	return st, nil
}

// subresources are the status and scale subresources of a version as the
// strategy takes them. The status validator serves only updates of the
// status subresource, which a create never runs: the strategy gets none
// (a large CRD's status schema is often half of it).
func subresources(v1 *apiextensionsv1.CustomResourceDefinition, version string) (*apiextensions.CustomResourceSubresourceStatus, *apiextensions.CustomResourceSubresourceScale) {
	var statusSpec *apiextensions.CustomResourceSubresourceStatus
	var scaleSpec *apiextensions.CustomResourceSubresourceScale
	subs, _ := apiextensionshelpers.GetSubresourcesForVersion(v1, version)
	if subs != nil && subs.Status != nil {
		statusSpec = &apiextensions.CustomResourceSubresourceStatus{}
	}
	if subs != nil && subs.Scale != nil {
		scaleSpec = &apiextensions.CustomResourceSubresourceScale{}
		_ = apiextensionsv1.Convert_v1_CustomResourceSubresourceScale_To_apiextensions_CustomResourceSubresourceScale(subs.Scale, scaleSpec, nil)
	}
	return statusSpec, scaleSpec
}

// openAPISchema is the OpenAPI schema apiservervalidation.NewSchemaValidator
// builds from a CRD's schema (the same conversion and post-processing),
// with its equal subtrees shared (share).
func openAPISchema(props *apiextensions.JSONSchemaProps) (*spec.Schema, error) {
	openapi := &spec.Schema{}
	if props == nil {
		return openapi, nil
	}
	formats := apiservervalidation.StripUnsupportedFormatsPostProcessorForVersion(environment.DefaultCompatibilityVersion())
	if err := apiservervalidation.ConvertJSONSchemaPropsWithPostProcess(props, openapi, formats); err != nil {
		return nil, err
	}
	share(openapi)
	return openapi, nil
}

// admit runs a custom resource through what the server's custom resource
// handler runs on a create: pruning of unknown fields (refused under strict
// field validation), metadata coercion, schema defaulting, then the
// strategy's create validation (OpenAPI schema, CEL rules, metadata).
func (s *crdSet) admit(o *manifest.Object, gvk schema.GroupVersionKind, content map[string]any) Result {
	v := s.version(gvk)
	if v.err != nil {
		return Result{Judged: true, Rejected: true, Problems: []Problem{{Rule: RuleUnservedKind, Field: "apiVersion",
			Message: fmt.Sprintf("%s %s cannot be created: %v", o.APIVersion, o.Kind, v.err)}}}
	}
	if !v.served {
		return Result{Judged: true, Rejected: true, Problems: []Problem{{Rule: RuleUnservedKind, Field: "apiVersion",
			Message: fmt.Sprintf("the CustomResourceDefinition %s does not serve version %s; served: %s", v.crd.Name, gvk.Version, servedCRDVersions(v.crd))}}}
	}
	res := Result{Judged: true}
	if v.deprecation != "" {
		res.Problems = append(res.Problems, Problem{Rule: RuleWarning, Field: "apiVersion", Message: v.deprecation, Warning: true})
	}
	var d decoded
	// The content is the object's own decoded copy, replaced below: prune and
	// default it in place rather than copy it.
	u := &unstructured.Unstructured{Object: content}
	if v.structural != nil && !preserveUnknown(v.crd) {
		_, _, metaUnknown, err := schemaobjectmeta.GetObjectMetaWithOptions(u.Object, schemaobjectmeta.ObjectMetaOptions{ReturnUnknownFieldPaths: true})
		if err != nil {
			res.Problems = append(res.Problems, Problem{Rule: RuleType, Field: "metadata", Message: fmt.Sprintf("metadata: %v", err)})
			res.Rejected = true
			return res
		}
		unknown := append([]string(nil), metaUnknown...)
		unknown = append(unknown, structuralpruning.PruneWithOptions(u.Object, v.structural, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})...)
		structuraldefaulting.PruneNonNullableNullsWithoutDefaults(u.Object, v.structural)
		if ferr, paths := schemaobjectmeta.CoerceWithOptions(nil, u.Object, v.structural, false, schemaobjectmeta.CoerceOptions{ReturnUnknownFieldPaths: true}); ferr != nil {
			res.Problems = append(res.Problems, fieldProblem(ferr))
			res.Rejected = true
		} else {
			unknown = append(unknown, paths...)
		}
		sort.Strings(unknown)
		for _, p := range unknown {
			res.Problems = append(res.Problems, Problem{Rule: RuleUnknownField, Field: p,
				Message: fmt.Sprintf("unknown field %q: the CustomResourceDefinition %s has no such field, and the API server refuses it (kubectl apply validates fields strictly by default)", p, v.crd.Name)})
			res.Rejected = true
		}
		d.unknown = unknown
		structuraldefaulting.Default(u.Object, v.structural)
	}
	res.addStages(&d, foldCELNotChecked(s.a.create(o, gvk, u, v.strategy)))
	o.SetContent(u.Object)
	return res
}

// celNotChecked is what a custom resource's validation says when a schema
// error kept it from running the CRD's CEL rules (customresource's
// hasBlockingErr).
const celNotChecked = "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation"

// crdV1 is the kind of a CustomResourceDefinition as written today.
var crdV1 = apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition")

// hoisted are the fields of a CRD's versions that the server's internal
// CRD holds once for all versions when every version has the same, and
// names so in its errors (spec.validation.openAPIV3Schema...: the
// server's words, kept in the message).
var hoisted = []struct{ internal, written string }{
	{"spec.validation", "spec.versions[0].schema"},
	{"spec.subresources", "spec.versions[0].subresources"},
	{"spec.additionalPrinterColumns", "spec.versions[0].additionalPrinterColumns"},
}

// crdFieldsAsWritten points the problems the server names by a hoisted
// field at the field as a v1 CRD writes it (the first version's), so that a
// finding deep in a schema is located there, not at spec.
func crdFieldsAsWritten(ps []Problem) {
	for i, p := range ps {
		for _, h := range hoisted {
			if rest, ok := strings.CutPrefix(p.Field, h.internal); ok && (rest == "" || rest[0] == '.' || rest[0] == '[') {
				ps[i].Field = h.written + rest
				break
			}
		}
	}
}

// foldCELNotChecked turns the server's "some validation rules were not
// checked" error, which is no problem of its own, into a note on the first
// error that kept the CEL rules from running.
func foldCELNotChecked(c created) created {
	var errs field.ErrorList
	folded := false
	for _, e := range c.errs {
		if e.Detail == celNotChecked {
			folded = true
			continue
		}
		errs = append(errs, e)
	}
	if !folded {
		return c
	}
	c.errs = errs
	for _, e := range errs {
		switch e.Type {
		case field.ErrorTypeNotSupported, field.ErrorTypeRequired, field.ErrorTypeTooLong, field.ErrorTypeTooMany, field.ErrorTypeTypeInvalid:
			c.notes = map[*field.Error]string{e: "; the CustomResourceDefinition's CEL rules (x-kubernetes-validations) are checked only once this is fixed"}
			return c
		}
	}
	return c
}

// deprecationWarning is the warning the server's custom resource handler
// returns for a deprecated version: the CRD's deprecationWarning, else
// what apiextensions-apiserver's defaultDeprecationWarning says (the
// newest served version not deprecated that is newer, if any).
func deprecationWarning(crd *apiextensions.CustomResourceDefinition, ver apiextensions.CustomResourceDefinitionVersion) string {
	if ver.DeprecationWarning != nil {
		return *ver.DeprecationWarning
	}
	msg := fmt.Sprintf("%s/%s %s is deprecated", crd.Spec.Group, ver.Name, crd.Spec.Names.Kind)
	var newer []string
	for _, v := range crd.Spec.Versions {
		if v.Served && !v.Deprecated && version.CompareKubeAwareVersionStrings(ver.Name, v.Name) < 0 {
			newer = append(newer, v.Name)
		}
	}
	if len(newer) == 0 {
		return msg
	}
	sort.Slice(newer, func(i, j int) bool { return version.CompareKubeAwareVersionStrings(newer[i], newer[j]) > 0 })
	return msg + fmt.Sprintf("; use %s/%s %s", crd.Spec.Group, newer[0], crd.Spec.Names.Kind)
}

func servedCRDVersions(c *apiextensions.CustomResourceDefinition) string {
	var out []string
	for _, v := range c.Spec.Versions {
		if v.Served {
			out = append(out, v.Name)
		}
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, ", ")
}

func preserveUnknown(c *apiextensions.CustomResourceDefinition) bool {
	return c.Spec.PreserveUnknownFields != nil && *c.Spec.PreserveUnknownFields
}
