package policies

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules/sidecar"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"sigs.k8s.io/yaml"
)

// Where the params live, in kiln lint and in a cluster.
const (
	ParamsName      = "kiln-rule-params"
	ParamsNamespace = "kiln-system"
)

// HelperKeyPrefix starts the params keys that name helper images.
const HelperKeyPrefix = "helper."

// ParamsData returns the data of the params ConfigMap for a target version:
// kubeVersion ("1.31"), and for each image name of the sidecar package's
// helper table a key "helper.<name>" (a "/" in the name written as ".",
// since ConfigMap keys cannot hold one; names hold no ".") whose value says
// what the helper is: "helper.envoy": "Envoy proxy", "helper.linkerd.proxy":
// "Linkerd proxy". The policies look an image's last segment, and its last
// two segments, up directly, so the table costs nothing per container.
func ParamsData(kube manifest.KubeVersion) map[string]string {
	d := map[string]string{"kubeVersion": kube.String()}
	for _, h := range sidecar.Helpers() {
		for _, img := range h.Images {
			k := HelperKeyPrefix + strings.ReplaceAll(img, "/", ".")
			if _, dup := d[k]; !dup { // the first in table order wins, as in KnownHelper
				d[k] = h.What
			}
		}
	}
	return d
}

// ExportOptions say how to bind the policies.
type ExportOptions struct {
	// KubeVersion goes into the params (the version the rules judge against).
	KubeVersion manifest.KubeVersion
	// Actions are the validationActions of every binding (see ParseActions).
	Actions []admissionv1.ValidationAction
	// NamespaceSelector, when set, limits every binding to the namespaces it selects.
	NamespaceSelector *metav1.LabelSelector
	// Keep, when set, keeps only the policies it accepts.
	Keep func(*Policy) bool
}

// Export writes the policies as a YAML stream for a cluster: the params
// Namespace and ConfigMap (when a policy uses params), then each policy as
// embedded (comments kept) followed by its binding, by policy name. The
// output depends only on opts.
func Export(opts ExportOptions) ([]byte, error) {
	parts, err := exportParts(opts)
	if err != nil {
		return nil, err
	}
	docs := make([][]byte, len(parts))
	for i, pt := range parts {
		docs[i] = pt.doc
		if pt.policy != nil {
			docs[i] = bytes.TrimPrefix(pt.policy.Source, []byte("---\n"))
		}
	}
	return bytes.Join(docs, []byte("---\n")), nil
}

// An exportPart is one document of Export's stream: an embedded policy, or
// a document written for the export (the params, a binding).
type exportPart struct {
	policy *Policy
	doc    []byte
}

// exportParts returns Export's documents in order.
func exportParts(opts ExportOptions) ([]exportPart, error) {
	if len(opts.Actions) == 0 {
		return nil, fmt.Errorf("no validation action: use Deny, Warn and/or Audit")
	}
	var ps []*Policy
	params := false
	for _, p := range loaded() {
		if opts.Keep == nil || opts.Keep(p) {
			ps = append(ps, p)
			params = params || p.Params
		}
	}
	var parts []exportPart
	add := func(v any) error {
		b, err := yaml.Marshal(v)
		if err != nil {
			return err
		}
		parts = append(parts, exportPart{doc: b})
		return nil
	}
	if params {
		ns := map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ParamsNamespace}}
		cm := map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": ParamsName, "namespace": ParamsNamespace,
				"labels": map[string]any{"app.kubernetes.io/managed-by": "kiln"}},
			"data": ParamsData(opts.KubeVersion)}
		if err := add(ns); err != nil {
			return nil, err
		}
		if err := add(cm); err != nil {
			return nil, err
		}
	}
	actions := make([]any, len(opts.Actions))
	for i, a := range opts.Actions {
		actions[i] = string(a)
	}
	for _, p := range ps {
		parts = append(parts, exportPart{policy: p})
		spec := map[string]any{"policyName": p.Name, "validationActions": actions}
		if p.Params {
			spec["paramRef"] = map[string]any{"name": ParamsName, "namespace": ParamsNamespace, "parameterNotFoundAction": "Deny"}
		}
		if opts.NamespaceSelector != nil {
			spec["matchResources"] = map[string]any{"namespaceSelector": opts.NamespaceSelector}
		}
		b := map[string]any{"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
			"metadata": map[string]any{"name": p.Name}, "spec": spec}
		if err := add(b); err != nil {
			return nil, err
		}
	}
	return parts, nil
}

// ParseActions parses the validationActions of a binding: Deny, Warn and
// Audit, comma-separated or given several times, case-insensitive. Like the
// API server it rejects duplicates and Deny together with Warn.
func ParseActions(values []string) ([]admissionv1.ValidationAction, error) {
	var out []admissionv1.ValidationAction
	for _, v := range values {
		for _, s := range strings.Split(v, ",") {
			var a admissionv1.ValidationAction
			switch strings.ToLower(strings.TrimSpace(s)) {
			case "deny":
				a = admissionv1.Deny
			case "warn":
				a = admissionv1.Warn
			case "audit":
				a = admissionv1.Audit
			default:
				return nil, fmt.Errorf("unknown validation action %q: use Deny, Warn or Audit", strings.TrimSpace(s))
			}
			if slices.Contains(out, a) {
				return nil, fmt.Errorf("validation action %s given twice", a)
			}
			out = append(out, a)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no validation action: use Deny, Warn and/or Audit")
	}
	if slices.Contains(out, admissionv1.Deny) && slices.Contains(out, admissionv1.Warn) {
		return nil, fmt.Errorf("validation actions Deny and Warn together are redundant and the API server rejects them: Deny already returns the message to the client")
	}
	return out, nil
}

// ParseNamespaceSelector parses a label selector string ("env=prod,team!=ml",
// "tier in (web,api)", "!legacy") with the API machinery's parser
// (labels.Parse) and converts it into a binding's namespaceSelector:
// equality into matchLabels, inequality and notin into NotIn, in into In,
// existence into Exists and DoesNotExist. Gt and Lt have no LabelSelector
// form and are rejected.
func ParseNamespaceSelector(s string) (*metav1.LabelSelector, error) {
	sel, err := labels.Parse(s)
	if err != nil {
		return nil, err
	}
	reqs, _ := sel.Requirements()
	out := &metav1.LabelSelector{}
	for _, r := range reqs {
		vals := r.Values().List()
		var op metav1.LabelSelectorOperator
		switch r.Operator() {
		case selection.Equals, selection.DoubleEquals:
			if _, dup := out.MatchLabels[r.Key()]; !dup {
				if out.MatchLabels == nil {
					out.MatchLabels = map[string]string{}
				}
				out.MatchLabels[r.Key()] = vals[0]
				continue
			}
			op = metav1.LabelSelectorOpIn
		case selection.In:
			op = metav1.LabelSelectorOpIn
		case selection.NotEquals, selection.NotIn:
			op = metav1.LabelSelectorOpNotIn
		case selection.Exists:
			op = metav1.LabelSelectorOpExists
		case selection.DoesNotExist:
			op = metav1.LabelSelectorOpDoesNotExist
		default:
			return nil, fmt.Errorf("operator %q of %q has no namespaceSelector form: use =, ==, !=, in, notin, KEY or !KEY", r.Operator(), r.String())
		}
		out.MatchExpressions = append(out.MatchExpressions, metav1.LabelSelectorRequirement{Key: r.Key(), Operator: op, Values: vals})
	}
	return out, nil
}
