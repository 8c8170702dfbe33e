package cel

import (
	"fmt"
	"sync"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions"
	"k8s.io/apiserver/pkg/cel/environment"
)

var (
	envOnce sync.Once
	envSet  *environment.EnvSet
)

// compositionEnv mirrors getCompositionEnvTemplateWithStrictCost in
// k8s.io/apiserver/pkg/admission/plugin/policy/validating/plugin.go: the base
// environment (Kubernetes CEL libraries, per-call cost limit) at the
// server's default compatibility version.
func compositionEnv() *environment.EnvSet {
	envOnce.Do(func() {
		envSet = environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion())
	})
	return envSet
}

// compileProblem is an expression that does not compile: Field is its path
// in the policy ("spec.validations[0].expression").
type compileProblem struct {
	Field string
	Err   error
}

// compilePolicy mirrors compilePolicy in
// k8s.io/apiserver/pkg/admission/plugin/policy/validating/plugin.go (which is
// unexported): one composited compiler per policy, variables compiled and
// stored first, then match conditions, validations, audit annotations and
// message expressions, wrapped by validating.NewValidator. Unlike upstream
// it also returns each expression that does not compile, with its field
// path, so that kiln can report it on the policy itself; the validator
// still carries the errors and fails at evaluation exactly as upstream.
// Finding them compiles each expression a second time: without checkEach
// (policies known to compile) it does not, and returns no problems.
func compilePolicy(policy *admissionv1.ValidatingAdmissionPolicy, checkEach bool) (validating.Validator, []compileProblem) {
	hasParam := policy.Spec.ParamKind != nil
	optionalVars := plugincel.OptionalVariableDeclarations{HasParams: hasParam, HasAuthorizer: true}
	expressionOptionalVars := plugincel.OptionalVariableDeclarations{HasParams: hasParam, HasAuthorizer: false}
	failurePolicy := policy.Spec.FailurePolicy
	var matcher matchconditions.Matcher
	matchConditions := policy.Spec.MatchConditions
	filterCompiler, err := plugincel.NewCompositedCompiler(compositionEnv())
	if err != nil {
		return validating.NewValidator(nil, nil, nil, nil, failurePolicy, err), []compileProblem{{Field: "spec", Err: err}}
	}
	var problems []compileProblem
	check := func(field string, acc plugincel.ExpressionAccessor, opts plugincel.OptionalVariableDeclarations) {
		if acc == nil || !checkEach {
			return
		}
		if r := filterCompiler.CompileCELExpression(acc, opts, environment.StoredExpressions); r.Error != nil {
			problems = append(problems, compileProblem{Field: field, Err: r.Error})
		}
	}

	// Upstream: filterCompiler.CompileAndStoreVariables, which calls
	// CompileAndStoreVariable for each variable in order.
	for i, v := range convertVariables(policy.Spec.Variables) {
		if r := filterCompiler.CompileAndStoreVariable(v, optionalVars, environment.StoredExpressions); r.Error != nil {
			problems = append(problems, compileProblem{Field: fmt.Sprintf("spec.variables[%d].expression", i), Err: r.Error})
		}
	}
	if len(matchConditions) > 0 {
		matchExpressionAccessors := make([]plugincel.ExpressionAccessor, len(matchConditions))
		for i := range matchConditions {
			matchExpressionAccessors[i] = (*matchconditions.MatchCondition)(&matchConditions[i])
			check(fmt.Sprintf("spec.matchConditions[%d].expression", i), matchExpressionAccessors[i], optionalVars)
		}
		matcher = matchconditions.NewMatcher(filterCompiler.CompileCondition(matchExpressionAccessors, optionalVars, environment.StoredExpressions), failurePolicy, "policy", "validate", policy.Name)
	}
	validations := convertValidations(policy.Spec.Validations)
	messages := convertMessageExpressions(policy.Spec.Validations)
	audits := convertAuditAnnotations(policy.Spec.AuditAnnotations)
	for i := range validations {
		check(fmt.Sprintf("spec.validations[%d].expression", i), validations[i], optionalVars)
		if messages[i] != nil {
			check(fmt.Sprintf("spec.validations[%d].messageExpression", i), messages[i], expressionOptionalVars)
		}
	}
	for i := range audits {
		check(fmt.Sprintf("spec.auditAnnotations[%d].valueExpression", i), audits[i], optionalVars)
	}
	res := validating.NewValidator(
		filterCompiler.CompileCondition(validations, optionalVars, environment.StoredExpressions),
		matcher,
		filterCompiler.CompileCondition(audits, optionalVars, environment.StoredExpressions),
		filterCompiler.CompileCondition(messages, expressionOptionalVars, environment.StoredExpressions),
		failurePolicy,
		nil,
	)
	return res, problems
}

// convertValidations mirrors convertv1Validations in validating/plugin.go.
func convertValidations(in []admissionv1.Validation) []plugincel.ExpressionAccessor {
	out := make([]plugincel.ExpressionAccessor, len(in))
	for i, v := range in {
		out[i] = &validating.ValidationCondition{Expression: v.Expression, Message: v.Message, Reason: v.Reason}
	}
	return out
}

// convertMessageExpressions mirrors convertv1MessageExpressions in validating/plugin.go.
func convertMessageExpressions(in []admissionv1.Validation) []plugincel.ExpressionAccessor {
	out := make([]plugincel.ExpressionAccessor, len(in))
	for i, v := range in {
		if v.MessageExpression != "" {
			out[i] = &validating.MessageExpressionCondition{MessageExpression: v.MessageExpression}
		}
	}
	return out
}

// convertAuditAnnotations mirrors convertv1AuditAnnotations in validating/plugin.go.
func convertAuditAnnotations(in []admissionv1.AuditAnnotation) []plugincel.ExpressionAccessor {
	out := make([]plugincel.ExpressionAccessor, len(in))
	for i, a := range in {
		out[i] = &validating.AuditAnnotationCondition{Key: a.Key, ValueExpression: a.ValueExpression}
	}
	return out
}

// convertVariables mirrors convertv1beta1Variables in validating/plugin.go.
func convertVariables(in []admissionv1.Variable) []plugincel.NamedExpressionAccessor {
	out := make([]plugincel.NamedExpressionAccessor, len(in))
	for i, v := range in {
		out[i] = &validating.Variable{Name: v.Name, Expression: v.Expression}
	}
	return out
}
