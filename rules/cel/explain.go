package cel

import (
	"fmt"
	"strings"

	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules"
	admissionv1 "k8s.io/api/admissionregistration/v1"
)

// namespaceNote is what every policy rule says about namespaceObject.
const namespaceNote = `Offline context: each binding is evaluated against every other object as a CREATE request
(oldObject is null). namespaceObject is the Namespace object from the input when it is there;
otherwise kiln synthesizes one with only the label kubernetes.io/metadata.name=<namespace>
(as a fresh namespace has in a cluster), so namespaceSelector and namespaceObject see no other
labels or annotations. A namespaced object without metadata.namespace is taken to be in "default".
request.userInfo is --as (default kiln:offline) in --as-group (default system:authenticated);
the authorizer answers --authorizer (default deny). Params come from the input (ConfigMaps or
custom resources named by the binding's paramRef).`

// policyRule describes one policy as a rule for `kiln rules` and `kiln explain`.
func policyRule(p *policyEntry) *rules.Rule {
	r := &rules.Rule{ID: p.ruleID, Severity: rules.Error}
	if p.spec == nil {
		r.Summary = fmt.Sprintf("ValidatingAdmissionPolicy %s (does not decode; see its findings)", p.name)
		r.Doc = namespaceNote
		return r
	}
	spec := p.spec.Spec
	r.Summary = "ValidatingAdmissionPolicy " + p.name
	if len(spec.Validations) > 0 {
		v := spec.Validations[0]
		msg := strings.TrimSpace(v.Message)
		if msg == "" {
			msg = "requires " + strings.TrimSpace(v.Expression)
		}
		r.Summary += ": " + oneLine(msg)
		if len(spec.Validations) > 1 {
			r.Summary += fmt.Sprintf(" (+%d more)", len(spec.Validations)-1)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "ValidatingAdmissionPolicy %q (%s:%d)\n", p.name, p.obj.File, p.obj.Pos().Line)
	if mc := spec.MatchConstraints; mc != nil {
		b.WriteString("\nMatches:\n")
		writeRules(&b, "  ", mc.ResourceRules)
		if len(mc.ExcludeResourceRules) > 0 {
			b.WriteString("  excluding:\n")
			writeRules(&b, "    ", mc.ExcludeResourceRules)
		}
	}
	if spec.ParamKind != nil {
		fmt.Fprintf(&b, "\nParams: %s %s\n", spec.ParamKind.APIVersion, spec.ParamKind.Kind)
	}
	if spec.FailurePolicy != nil {
		fmt.Fprintf(&b, "Failure policy: %s\n", *spec.FailurePolicy)
	}
	section := func(title string, n int, item func(i int) string) {
		if n == 0 {
			return
		}
		fmt.Fprintf(&b, "\n%s:\n", title)
		for i := 0; i < n; i++ {
			fmt.Fprintf(&b, "  %d. %s\n", i+1, item(i))
		}
	}
	section("Match conditions", len(spec.MatchConditions), func(i int) string {
		return spec.MatchConditions[i].Name + ": " + oneLine(spec.MatchConditions[i].Expression)
	})
	section("Variables", len(spec.Variables), func(i int) string {
		return spec.Variables[i].Name + " = " + oneLine(spec.Variables[i].Expression)
	})
	section("Validations", len(spec.Validations), func(i int) string {
		v := spec.Validations[i]
		s := oneLine(v.Expression)
		switch {
		case v.MessageExpression != "":
			s += "\n     messageExpression: " + oneLine(v.MessageExpression)
		case v.Message != "":
			s += "\n     message: " + oneLine(v.Message)
		}
		if v.Reason != nil {
			s += "\n     reason: " + string(*v.Reason)
		}
		return s
	})
	section("Audit annotations", len(spec.AuditAnnotations), func(i int) string {
		return spec.AuditAnnotations[i].Key + " = " + oneLine(spec.AuditAnnotations[i].ValueExpression)
	})
	section("Bindings", len(p.bindings), func(i int) string {
		bs := p.bindings[i].spec
		s := fmt.Sprintf("%s: %s", bs.Name, actions(bs.Spec.ValidationActions))
		if ref := bs.Spec.ParamRef; ref != nil {
			s += ", params " + paramRefString(ref)
		}
		return s
	})
	fmt.Fprintf(&b, "\nSeverity: validationActions Deny → error, Warn → warning, Audit → info.\n\n%s\n", namespaceNote)
	r.Doc = b.String()
	return r
}

func writeRules(b *strings.Builder, indent string, rs []admissionv1.NamedRuleWithOperations) {
	for _, r := range rs {
		groups := make([]string, len(r.APIGroups))
		for i, g := range r.APIGroups {
			if g == "" {
				g = `""` // the core group
			}
			groups[i] = g
		}
		fmt.Fprintf(b, "%s%s %s/%s %s", indent, strings.Join(opsStrings(r.Operations), ","), strings.Join(groups, ","), strings.Join(r.APIVersions, ","), strings.Join(r.Resources, ","))
		if len(r.ResourceNames) > 0 {
			fmt.Fprintf(b, " named %s", strings.Join(r.ResourceNames, ","))
		}
		b.WriteString("\n")
	}
}

func opsStrings(ops []admissionv1.OperationType) []string {
	out := make([]string, len(ops))
	for i, o := range ops {
		out[i] = string(o)
	}
	return out
}

func actions(as []admissionv1.ValidationAction) string {
	out := make([]string, len(as))
	for i, a := range as {
		out[i] = string(a)
	}
	if len(out) == 0 {
		return "no validationActions"
	}
	return strings.Join(out, ", ")
}

func paramRefString(ref *admissionv1.ParamRef) string {
	s := ""
	switch {
	case ref.Name != "":
		s = "named " + ref.Name
	case ref.Selector != nil:
		s = "selected by " + ref.Selector.String()
	}
	if ref.Namespace != "" {
		s += " in " + ref.Namespace
	}
	if ref.ParameterNotFoundAction != nil {
		s += fmt.Sprintf(" (not found: %s)", *ref.ParameterNotFoundAction)
	}
	return s
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// PolicyRules returns a rule for each ValidatingAdmissionPolicy among objs
// (and for each policy name a binding refers to), as the "cel" checker
// would declare them: for `kiln rules PATH…` and `kiln explain
// policy/<name> PATH…`.
func PolicyRules(objs []*manifest.Object) []*rules.Rule {
	return New(objs, objs, Options{}).Rules()
}

type errorList []error

func (l errorList) Error() string {
	s := make([]string, len(l))
	for i, e := range l {
		s[i] = e.Error()
	}
	return strings.Join(s, "\n")
}

func joinErrors(errs []error) error {
	manifest.SortErrors(errs)
	return errorList(errs)
}
