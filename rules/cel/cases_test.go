package cel

import "github.com/kilnhq/kiln/rules"

// withOpts returns the default options changed by f.
func withOpts(f func(*rules.Options)) *rules.Options {
	o := rules.DefaultOptions()
	f(o)
	return o
}

type fileCase struct {
	name string
	file string
	opts *rules.Options
	want []string
	// slow cases (seconds of CEL work) are skipped with -short.
	slow bool
}

var fileCases = []fileCase{
	{name: "replicas", file: "docs/replicas.yaml"},
	{name: "params-crd", file: "docs/params-crd.yaml"},
	{name: "message-expression", file: "docs/message-expression.yaml"},
	{name: "match-conditions", file: "docs/match-conditions.yaml"},
	{name: "match-conditions-system-user", file: "docs/match-conditions.yaml", opts: withOpts(func(o *rules.Options) { o.User = "system:serviceaccount:kube-system:deployer" })},
	{name: "match-conditions-node-group", file: "docs/match-conditions.yaml", opts: withOpts(func(o *rules.Options) { o.Groups = []string{"system:nodes", "system:authenticated"} })},
	{name: "match-conditions-breakglass", file: "docs/match-conditions.yaml", opts: withOpts(func(o *rules.Options) { o.Authorizer = "allow" })},
	{name: "variables", file: "docs/variables.yaml"},
	{name: "warn-audit", file: "docs/warn-audit.yaml"},
	{name: "audit-annotations", file: "docs/audit-annotations.yaml"},
	{name: "param-not-found", file: "docs/param-not-found.yaml"},
	{name: "cost", file: "docs/cost.yaml"},
	{name: "over-budget", file: "over-budget.yaml", slow: true},
	{name: "compile-error", file: "docs/compile-error.yaml"},
	{name: "libraries", file: "docs/libraries.yaml"},
	{name: "libraries-authorizer-allow", file: "docs/libraries.yaml", opts: withOpts(func(o *rules.Options) { o.Authorizer = "allow" })},
	{name: "required-labels", file: "docs/required-labels.yaml"},
	{name: "bad-config", file: "docs/bad-config.yaml"},
	{name: "resource-rules", file: "match/resource-rules.yaml"},
	{name: "selectors", file: "match/selectors.yaml"},
	{name: "match-policy", file: "match/match-policy.yaml"},
}
