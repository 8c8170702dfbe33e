// Package vapcompat tells whether the kube-apiserver of a Kubernetes release
// can create a ValidatingAdmissionPolicy: whether it serves the policy's API
// version, and whether it compiles every CEL expression of the policy as a
// new one. A server compiles new expressions in the CEL environment of its
// compatibility version, one minor below its own (component-base's default
// MinCompatibilityVersion), and the libraries of that environment carry the
// release that introduced them (k8s.io/apiserver pkg/cel/environment); a
// policy that uses a newer library is refused at create.
package vapcompat

import (
	"fmt"
	"strings"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/version"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions"
	"k8s.io/apiserver/pkg/cel/environment"

	"github.com/kilnhq/kiln/admit/servedversions"
	"github.com/kilnhq/kiln/manifest"
)

// Problem is why a server cannot create one policy.
type Problem struct {
	Policy string // metadata.name
	Field  string // spec.validations[0].expression, or "" for the whole policy
	Msg    string
}

func (p Problem) String() string {
	if p.Field == "" {
		return p.Policy + ": " + p.Msg
	}
	return p.Policy + " " + p.Field + ": " + p.Msg
}

// Check returns why a kube-apiserver of release kube would refuse to create
// each policy (none: it creates them all).
func Check(kube manifest.KubeVersion, policies []*manifest.Object) []Problem {
	var out []Problem
	for _, o := range policies {
		if e, ok := servedversions.Lookup(o.Group(), o.Version(), o.Kind); !ok || !e.Served.Has(kube) {
			out = append(out, Problem{Policy: o.Name, Msg: fmt.Sprintf("Kubernetes %s does not serve %s %s", kube, o.APIVersion, o.Kind)})
			continue
		}
		content, err := o.Content()
		if err != nil {
			out = append(out, Problem{Policy: o.Name, Msg: err.Error()})
			continue
		}
		var p admissionv1.ValidatingAdmissionPolicy
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(content, &p); err != nil {
			out = append(out, Problem{Policy: o.Name, Msg: err.Error()})
			continue
		}
		for _, e := range compileNew(kube, &p) {
			out = append(out, Problem{Policy: o.Name, Field: e.field, Msg: e.err.Error()})
		}
	}
	return out
}

// Oldest returns the oldest release in [from, to] whose server creates every
// policy, and false when none does.
func Oldest(from, to manifest.KubeVersion, policies []*manifest.Object) (manifest.KubeVersion, bool) {
	for v := from; !to.Less(v); v.Minor++ {
		if len(Check(v, policies)) == 0 {
			return v, true
		}
	}
	return manifest.KubeVersion{}, false
}

type compileError struct {
	field string
	err   error
}

// compileNew compiles the policy's expressions as the API server's
// validateValidatingAdmissionPolicySpec does for a create (k8s.io/kubernetes
// pkg/apis/admissionregistration/validation): every expression is new, in
// the environment of the server's compatibility version; variables are
// compiled in order by one composited compiler, match conditions by a
// compiler without variables.
func compileNew(kube manifest.KubeVersion, p *admissionv1.ValidatingAdmissionPolicy) []compileError {
	envSet := environment.MustBaseEnvSet(version.MajorMinor(uint(kube.Major), uint(kube.Minor-1)))
	hasParams := p.Spec.ParamKind != nil
	withAuthz := plugincel.OptionalVariableDeclarations{HasParams: hasParams, HasAuthorizer: true}
	var errs []compileError
	add := func(field string, r plugincel.CompilationResult) {
		if r.Error != nil {
			errs = append(errs, compileError{field, r.Error})
		}
	}
	stateless := plugincel.NewCompiler(envSet)
	for i := range p.Spec.MatchConditions {
		mc := matchconditions.MatchCondition(p.Spec.MatchConditions[i])
		add(fmt.Sprintf("spec.matchConditions[%d].expression", i), stateless.CompileCELExpression(&mc, withAuthz, environment.NewExpressions))
	}
	var c plugincel.Compiler = stateless
	if len(p.Spec.Variables) > 0 {
		composited, err := plugincel.NewCompositedCompiler(envSet)
		if err != nil {
			return []compileError{{"spec.variables", err}}
		}
		for i, v := range p.Spec.Variables {
			add(fmt.Sprintf("spec.variables[%d].expression", i), composited.CompileAndStoreVariable(&validating.Variable{Name: v.Name, Expression: v.Expression}, withAuthz, environment.NewExpressions))
		}
		c = composited
	}
	for i, v := range p.Spec.Validations {
		add(fmt.Sprintf("spec.validations[%d].expression", i), c.CompileCELExpression(&validating.ValidationCondition{Expression: v.Expression}, withAuthz, environment.NewExpressions))
		if v.MessageExpression != "" {
			add(fmt.Sprintf("spec.validations[%d].messageExpression", i), c.CompileCELExpression(&validating.MessageExpressionCondition{MessageExpression: v.MessageExpression},
				plugincel.OptionalVariableDeclarations{HasParams: hasParams}, environment.NewExpressions))
		}
	}
	for i, a := range p.Spec.AuditAnnotations {
		add(fmt.Sprintf("spec.auditAnnotations[%d].valueExpression", i), c.CompileCELExpression(&validating.AuditAnnotationCondition{ValueExpression: a.ValueExpression}, withAuthz, environment.NewExpressions))
	}
	return errs
}

// Refuse returns an error in plain words when a kube-apiserver of release
// kube would refuse any of the policies: how many, the first reason, and the
// oldest release that creates them all. It returns nil when it creates all.
func Refuse(kube manifest.KubeVersion, policies []*manifest.Object) error {
	ps := Check(kube, policies)
	if len(ps) == 0 {
		return nil
	}
	refused := map[string]bool{}
	for _, p := range ps {
		refused[p.Policy] = true
	}
	first := ps[0].String()
	if i := strings.IndexByte(first, '\n'); i >= 0 {
		first = first[:i]
	}
	need := "no Kubernetes release kiln knows creates them all"
	if v, ok := Oldest(kube, manifest.LatestKube, policies); ok {
		need = fmt.Sprintf("they need Kubernetes %s or newer", v)
	}
	return fmt.Errorf("a Kubernetes %s API server would refuse to create %d of the %d policies (%s); %s. kiln lint --kube-version %s judges the same rules offline",
		kube, len(refused), len(policies), first, need, kube)
}
