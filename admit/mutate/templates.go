package mutate

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/kubernetes/pkg/api/legacyscheme"

	"github.com/kilnhq/kiln/manifest"
)

var podsResource = corev1.SchemeGroupVersion.WithResource("pods")

// templates gives a workload's pod templates what the policies that match
// Pods would do to the Pods its controller creates, so that every rule
// judges the template as those Pods will be admitted. The server does this
// only when the controller creates each Pod; kiln does it ahead of time:
// for each template it makes the Pod the controller would send (the
// template's metadata and spec, the workload's namespace, generateName
// "<workload name>-" and no name, no ownerReferences), runs mutating
// admission on it as a Pod CREATE, and merges what the policies changed
// (the JSON merge patch from the defaulted Pod to the mutated one) into the
// template. A denial is a warning: the workload is admitted, its Pods would
// not be.
func (m *Mutator) templates(o *manifest.Object, obj runtime.Object, gvk schema.GroupVersionKind, ns string) runtime.Object {
	var paths []string
	for _, t := range manifest.PodTemplatesOf(o) {
		if t.Path != "" && !strings.Contains(t.Path, "[") { // built-in kinds: one template at a fixed path
			paths = append(paths, t.Path)
		}
	}
	if len(paths) == 0 {
		return obj
	}
	versioned, err := legacyscheme.Scheme.ConvertToVersion(obj, gvk.GroupVersion())
	if err != nil {
		return obj
	}
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(versioned)
	if err != nil {
		return obj
	}
	changed := false
	for _, path := range paths {
		tmpl, ok := manifest.ValueAt(u, path).(map[string]any)
		if !ok {
			continue
		}
		if m.template(o, tmpl, path, ns) {
			changed = true
		}
	}
	if !changed {
		return obj
	}
	out, err := legacyscheme.Scheme.New(gvk)
	if err != nil {
		return obj
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u, out); err != nil {
		return obj
	}
	internal, err := legacyscheme.Scheme.ConvertToVersion(out, schema.GroupVersion{Group: gvk.Group, Version: runtime.APIVersionInternal})
	if err != nil {
		return obj
	}
	return internal
}

// template mutates one pod template (in place) as the Pods made from it
// would be, and reports what changed; it returns whether anything did.
func (m *Mutator) template(o *manifest.Object, tmpl map[string]any, path, ns string) bool {
	meta, _ := tmpl["metadata"].(map[string]any)
	spec, _ := tmpl["spec"].(map[string]any)
	pod, before, ok := templatePod(o, meta, spec, ns)
	if !ok {
		return false
	}
	internal, err := legacyscheme.Scheme.ConvertToVersion(pod, schema.GroupVersion{Version: runtime.APIVersionInternal})
	if err != nil {
		return false
	}
	gvk := corev1.SchemeGroupVersion.WithKind("Pod")
	attr := admission.NewAttributesRecord(internal, nil, gvk, ns, "", podsResource, "", admission.Create, &metav1.CreateOptions{}, false, m.user)
	rec, err := m.dispatch(attr, gvk)
	for _, c := range rec.changes() {
		for i, f := range c.fields {
			c.fields[i] = path + "." + f
		}
		m.report(o, manifest.Problem{Rule: RuleApplied, Field: c.fields[0], Message: c.templateMessage(path)})
	}
	if err != nil {
		m.report(o, manifest.Problem{Rule: RuleDenied, Warning: true, Field: path, Message: fmt.Sprintf("the Pods made from %s would be refused: %v (mutating admission of a Pod CREATE)", path, err)})
		return false
	}
	if len(rec.order) == 0 {
		return false
	}
	return mergeMutated(tmpl, meta, spec, before, attr.GetObject())
}

// templatePod is the Pod a workload's controller sends for a template
// (its metadata and spec, the workload's namespace, generateName
// "<workload name>-" and no name), defaulted, with its JSON.
func templatePod(o *manifest.Object, meta, spec map[string]any, ns string) (*corev1.Pod, []byte, bool) {
	podMeta := runtime.DeepCopyJSON(map[string]any{"metadata": meta})["metadata"]
	pm, _ := podMeta.(map[string]any)
	if pm == nil {
		pm = map[string]any{}
	}
	delete(pm, "name")
	pm["generateName"] = o.Name + "-"
	pm["namespace"] = ns
	pod := &corev1.Pod{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": pm, "spec": runtime.DeepCopyJSONValue(spec)}, pod); err != nil {
		return nil, nil, false
	}
	legacyscheme.Scheme.Default(pod)
	before, err := json.Marshal(pod)
	if err != nil {
		return nil, nil, false
	}
	return pod, before, true
}

// mergeMutated merges what mutating admission changed on a template's Pod
// (the JSON merge patch from before, the defaulted Pod, to mutated) into
// the template's metadata and spec, in place; it returns whether it did.
func mergeMutated(tmpl, meta, spec map[string]any, before []byte, mutated runtime.Object) bool {
	versioned, err := legacyscheme.Scheme.ConvertToVersion(mutated, corev1.SchemeGroupVersion)
	if err != nil {
		return false
	}
	after, err := json.Marshal(versioned)
	if err != nil {
		return false
	}
	patch, err := jsonpatch.CreateMergePatch(before, after)
	if err != nil {
		return false
	}
	var p map[string]any
	if json.Unmarshal(patch, &p) != nil {
		return false
	}
	current, err := json.Marshal(map[string]any{"metadata": meta, "spec": spec})
	if err != nil {
		return false
	}
	sub := map[string]any{}
	for _, k := range []string{"metadata", "spec"} {
		if v, ok := p[k]; ok {
			sub[k] = v
		}
	}
	if meta, ok := sub["metadata"].(map[string]any); ok {
		delete(meta, "generateName")
		delete(meta, "namespace")
	}
	subPatch, err := json.Marshal(sub)
	if err != nil {
		return false
	}
	merged, err := jsonpatch.MergePatch(current, subPatch)
	if err != nil {
		return false
	}
	var next map[string]any
	if json.Unmarshal(merged, &next) != nil {
		return false
	}
	for k, v := range next {
		tmpl[k] = v
	}
	return true
}

// dispatch runs the policies on one request as the admission chain does:
// once, then once more if a mutation asks for reinvocation.
func (m *Mutator) dispatch(attr admission.Attributes, gvk schema.GroupVersionKind) (*record, error) {
	rec := &record{kind: gvk}
	ctx := context.WithValue(context.Background(), recordKey{}, rec)
	err := m.dispatcher.Dispatch(ctx, attr, m.oi, m.hooks)
	if rc := attr.GetReinvocationContext(); err == nil && rc.ShouldReinvoke() {
		rc.SetIsReinvoke()
		err = m.dispatcher.Dispatch(ctx, attr, m.oi, m.hooks)
	}
	return rec, err
}

func (c change) templateMessage(path string) string {
	fields := c.fields
	more := ""
	if len(fields) > maxFields {
		more = fmt.Sprintf(" and %d more", len(fields)-maxFields)
		fields = fields[:maxFields]
	}
	return fmt.Sprintf("MutatingAdmissionPolicy '%s' with binding '%s' changes the Pods made from %s: %s%s; every other rule judges the template as changed", c.policy, c.binding, path, strings.Join(fields, ", "), more)
}
