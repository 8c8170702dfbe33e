package cel

import (
	"context"
	"sync"

	celgo "github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	runtimek8s "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/admission"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions"
	"k8s.io/apiserver/pkg/cel/common"
	"k8s.io/apiserver/pkg/cel/environment"
)

// Fast matchConditions.
//
// Upstream evaluates a policy's matchConditions inside Validate, after
// building the admission request, the namespace object, the authorizer and
// the variables of a full activation. Most objects fail a prefilter, so for
// a policy with failurePolicy Ignore kiln first evaluates each condition
// that reads only object, oldObject and params, compiled by upstream's own
// compiler, in an activation with just those. A condition that comes out
// false without error means upstream's Match returns "no match" too (any
// false condition does, and with Ignore so does an error), and Validate
// returns no decision: kiln skips the call. Any other outcome (true, an
// error, a condition that reads more) calls Validate as before.

var (
	fastOnce sync.Once
	fastComp plugincel.Compiler
)

func fastCompiler() plugincel.Compiler {
	fastOnce.Do(func() { fastComp = plugincel.NewCompiler(compositionEnv()) })
	return fastComp
}

// fastMatchConditions compiles the policy's matchConditions for the fast
// path; nil when the policy does not qualify (not Ignore, no conditions).
func fastMatchConditions(policy *admissionv1.ValidatingAdmissionPolicy) []celgo.Program {
	spec := policy.Spec
	if spec.FailurePolicy == nil || *spec.FailurePolicy != admissionv1.Ignore || len(spec.MatchConditions) == 0 {
		return nil
	}
	decls := plugincel.OptionalVariableDeclarations{HasParams: spec.ParamKind != nil, HasAuthorizer: true}
	var progs []celgo.Program
	for i := range spec.MatchConditions {
		r := fastCompiler().CompileCELExpression((*matchconditions.MatchCondition)(&spec.MatchConditions[i]), decls, environment.StoredExpressions)
		if r.Error != nil {
			continue // e.g. it reads variables: upstream evaluates it
		}
		progs = append(progs, r.Program)
	}
	return progs
}

// failsFastMatch reports whether one of the policy's fast conditions is
// false for the object and param: upstream would find no match.
func failsFastMatch(ctx context.Context, progs []celgo.Program, va *admission.VersionedAttributes, param runtimek8s.Object) bool {
	if len(progs) == 0 || va == nil {
		return false
	}
	object, err := va.VersionedObject.CELValue()
	if err != nil {
		return false
	}
	var params any = types.NullValue
	if param != nil {
		params = common.SchemalessTypedToVal(param)
	}
	vars := map[string]any{plugincel.ObjectVarName: object, plugincel.OldObjectVarName: types.NullValue, plugincel.ParamsVarName: params}
	for _, p := range progs {
		out, _, err := p.ContextEval(ctx, vars)
		if err == nil && out == types.False {
			return true
		}
	}
	return false
}
