package mutate

import (
	"fmt"
	"strings"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/plugin/policy/mutating"
	webhookrules "k8s.io/apiserver/pkg/admission/plugin/webhook/predicates/rules"
	corelisters "k8s.io/client-go/listers/core/v1"

	"github.com/kilnhq/kiln/manifest"
)

// What kiln cannot evaluate offline is said once per cause and kind, at the
// first object of the kind, with how many objects it concerns: mutating
// webhooks (their answers come from a service kiln cannot call) and
// policies that match custom resources (kiln has no structured-merge types
// for them yet).

// webhook is one webhook of a MutatingWebhookConfiguration in the input.
type webhook struct {
	config string
	spec   admissionv1.MutatingWebhook
	nsSel  labels.Selector
	objSel labels.Selector
}

// NoteFinding is the rule and message of a note (Note) said at the first
// of count objects of kind.
func NoteFinding(n manifest.KindNote, kind string, count int) (rule, message string) {
	rule = RuleUnsupported
	if strings.HasPrefix(n.Cause, "webhook\x00") {
		rule = RuleWebhook
	}
	more := ""
	if count > 1 {
		more = fmt.Sprintf(" (this %s and %d more)", kind, count-1)
	}
	return rule, fmt.Sprintf(n.Msg, kind) + more
}

// noteOf tells the run's Note of o, if there is one.
func (m *Mutator) noteOf(o *manifest.Object, key, what string) {
	if m.note != nil {
		m.note(o, manifest.KindNote{Cause: key, Msg: what})
	}
}

// loadWebhooks reads the mutating webhooks among objs.
func loadWebhooks(objs []*manifest.Object) []webhook {
	var out []webhook
	for _, o := range objs {
		if o.Group() != group || o.Kind != "MutatingWebhookConfiguration" || o.Refused {
			continue
		}
		c := &admissionv1.MutatingWebhookConfiguration{}
		if decode(o, c) != nil {
			continue
		}
		for _, w := range c.Webhooks {
			ns, err1 := selector(w.NamespaceSelector)
			obj, err2 := selector(w.ObjectSelector)
			if err1 != nil || err2 != nil {
				continue
			}
			out = append(out, webhook{config: c.Name, spec: w, nsSel: ns, objSel: obj})
		}
	}
	return out
}

func selector(s *metav1.LabelSelector) (labels.Selector, error) {
	if s == nil {
		return labels.Everything(), nil
	}
	return metav1.LabelSelectorAsSelector(s)
}

// noteWebhooks notes each webhook whose rules and selectors match the
// request (its matchConditions are not evaluated: it may match).
func (m *Mutator) noteWebhooks(o *manifest.Object, attr admission.Attributes, nsLister corelisters.NamespaceLister) {
	for _, w := range m.webhooks {
		if !webhookMatches(w, attr, o, nsLister) {
			continue
		}
		key := "webhook\x00" + w.config + "\x00" + w.spec.Name
		m.noteOf(o, key, fmt.Sprintf("mutating webhook %q of MutatingWebhookConfiguration %q matches %%s objects: the cluster may change them in ways kiln cannot evaluate offline (kiln judges them without the webhook's changes)", w.spec.Name, w.config))
	}
}

func webhookMatches(w webhook, attr admission.Attributes, o *manifest.Object, nsLister corelisters.NamespaceLister) bool {
	matched := false
	for _, r := range w.spec.Rules {
		if (&webhookrules.Matcher{Rule: r, Attr: attr}).Matches() {
			matched = true
			break
		}
	}
	if !matched || !w.objSel.Matches(labels.Set(o.Labels)) {
		return false
	}
	if ns := attr.GetNamespace(); ns != "" && !w.nsSel.Empty() {
		n, err := nsLister.Get(ns)
		if err != nil || !w.nsSel.Matches(labels.Set(n.Labels)) {
			return false
		}
	}
	return true
}

// noteUnsupported notes the policies whose constraints and bindings match a
// custom resource, which kiln does not mutate.
func (m *Mutator) noteUnsupported(o *manifest.Object, attr admission.Attributes) {
	for _, h := range m.hooks {
		if h.ConfigurationError != nil || !m.hookMatches(h, attr) {
			continue
		}
		key := "policy\x00" + h.Policy.Name
		m.noteOf(o, key, fmt.Sprintf("MutatingAdmissionPolicy %q matches %%s objects, custom resources that kiln does not mutate yet: they are judged as written, without its changes", h.Policy.Name))
	}
}

func (m *Mutator) hookMatches(h mutating.PolicyHook, attr admission.Attributes) bool {
	ok, _, _, err := m.matcher.DefinitionMatches(attr, m.oi, mutating.NewMutatingAdmissionPolicyAccessor(h.Policy))
	if err != nil || !ok {
		return false
	}
	for _, b := range h.Bindings {
		if ok, err := m.matcher.BindingMatches(attr, m.oi, mutating.NewMutatingAdmissionPolicyBindingAccessor(b)); err == nil && ok {
			return true
		}
	}
	return false
}
