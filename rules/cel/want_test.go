package cel

// wantFindings are the exact findings of each fileCase: "line severity rule: message".
var wantFindings = map[string][]string{
	"replicas": {
		"36 error policy/demo-policy.example.com: ValidatingAdmissionPolicy 'demo-policy.example.com' with binding 'demo-binding-test.example.com' denied request: failed expression: object.spec.replicas <= 5",
	},
	"params-crd": {
		"101 error policy/replicalimit-policy.example.com: ValidatingAdmissionPolicy 'replicalimit-policy.example.com' with binding 'replicalimit-binding-test.example.com' denied request: failed expression: object.spec.replicas <= params.maxReplicas",
		"106 error policy/replicalimit-policy.example.com: ValidatingAdmissionPolicy 'replicalimit-policy.example.com' with binding 'replicalimit-binding-nontest' denied request: failed expression: object.spec.replicas <= params.maxReplicas",
	},
	"message-expression": {
		"44 error policy/deploy-replica-policy.example.com: ValidatingAdmissionPolicy 'deploy-replica-policy.example.com' with binding 'deploy-replica-binding' denied request: failed expression: has(object.metadata.labels)",
		"44 error policy/deploy-replica-policy.example.com: ValidatingAdmissionPolicy 'deploy-replica-policy.example.com' with binding 'deploy-replica-binding' denied request: name is too long",
		"44 error policy/deploy-replica-policy.example.com: ValidatingAdmissionPolicy 'deploy-replica-policy.example.com' with binding 'deploy-replica-binding' denied request: object.spec.replicas must be no greater than 3",
	},
	"match-conditions": {
		"34 error policy/demo-policy.example.com: ValidatingAdmissionPolicy 'demo-policy.example.com' with binding 'demo-binding' denied request: failed expression: !object.metadata.name.contains('demo') || object.metadata.namespace == 'demo'",
	},
	"match-conditions-system-user": {},
	"match-conditions-node-group":  {},
	"match-conditions-breakglass":  {},
	"variables": {
		"47 error policy/image-matches-namespace-environment.policy.example.com: ValidatingAdmissionPolicy 'image-matches-namespace-environment.policy.example.com' with binding 'image-matches-namespace-environment.binding' denied request: only staging images are allowed in namespace staging",
		"76 error policy/image-matches-namespace-environment.policy.example.com: ValidatingAdmissionPolicy 'image-matches-namespace-environment.policy.example.com' with binding 'image-matches-namespace-environment.binding' denied request: only prod images are allowed in namespace shop",
	},
	"warn-audit": {
		"26 info policy/demo-policy.example.com: Audit: validation failed for ValidatingAdmissionPolicy 'demo-policy.example.com' with binding 'demo-binding-warn-audit': too many replicas",
		"26 warning policy/demo-policy.example.com: Validation failed for ValidatingAdmissionPolicy 'demo-policy.example.com' with binding 'demo-binding-warn-audit': too many replicas",
		"31 info policy/demo-policy.example.com: Audit: validation failed for ValidatingAdmissionPolicy 'demo-policy.example.com' with binding 'demo-binding-warn-audit': failed expression: object.spec.replicas >= 2",
		"31 warning policy/demo-policy.example.com: Validation failed for ValidatingAdmissionPolicy 'demo-policy.example.com' with binding 'demo-binding-warn-audit': failed expression: object.spec.replicas >= 2",
	},
	"audit-annotations": {
		"32 info policy/demo-policy.example.com: ValidatingAdmissionPolicy 'demo-policy.example.com' with binding 'demo-binding-audit' adds audit annotation demo-policy.example.com/high-replica-count: Deployment spec.replicas set to 60",
		"37 info policy/demo-policy.example.com: Audit: validation failed for ValidatingAdmissionPolicy 'demo-policy.example.com' with binding 'demo-binding-audit': Deployment spec.replicas set to 3",
		"37 info policy/demo-policy.example.com: ValidatingAdmissionPolicy 'demo-policy.example.com' with binding 'demo-binding-audit' adds audit annotation demo-policy.example.com/high-replica-count: Deployment spec.replicas set to 3",
		"37 info policy/demo-policy.example.com: ValidatingAdmissionPolicy 'demo-policy.example.com' with binding 'demo-binding-audit' adds audit annotation demo-policy.example.com/small-replica-count: small",
	},
	"over-budget": {
		"35 error policy/over-budget: ValidatingAdmissionPolicy 'over-budget' with binding 'over-budget' denied request: validation failed due to running out of cost budget, no further validation rules will be run",
	},
	"param-not-found": {
		"44 warning policy/replica-limit: ValidatingAdmissionPolicyBinding \"no-param-ref\" has no paramRef but ValidatingAdmissionPolicy \"replica-limit\" declares paramKind v1/ConfigMap: the API server evaluates the policy with params = null",
		"48 error policy/replica-limit: ValidatingAdmissionPolicy 'replica-limit' with binding 'missing-deny' denied request: failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction",
		"48 error policy/replica-limit: ValidatingAdmissionPolicy 'replica-limit' with binding 'selector-none' denied request: failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction",
		"48 warning policy/replica-limit: Validation failed for ValidatingAdmissionPolicy 'replica-limit' with binding 'no-param-ref': expression 'object.spec.replicas <= int(params.data.max)' resulted in error: no such key: data",
	},
	"cost": {
		"43 error policy/expensive-fail: ValidatingAdmissionPolicy 'expensive-fail' with binding 'expensive-fail' denied request: expression 'variables.ten.all(a, variables.ten.all(b, variables.ten.all(c, variables.ten.all(d, variables.ten.all(e, variables.ten.all(f, variables.ten.all(g, a + b + c + d + e + f + g >= 0)))))))' resulted in error: operation cancelled: actual cost limit exceeded",
	},
	"compile-error": {
		"13 error policy/broken: ValidatingAdmissionPolicy \"broken\": spec.validations[1].expression does not compile: compilation failed: ERROR: <input>:1:32: undeclared reference to 'frobnicate' (in container '')\n | object.spec.replicas.frobnicate() <= 5\n | ...............................^",
		"27 error policy/broken-ignored: ValidatingAdmissionPolicy \"broken-ignored\": spec.validations[0].expression does not compile: compilation failed: ERROR: <input>:1:24: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n | object.spec.replicas <=\n | .......................^",
		"39 error policy/broken: ValidatingAdmissionPolicy 'broken' with binding 'broken' denied request: compilation error: compilation failed: ERROR: <input>:1:32: undeclared reference to 'frobnicate' (in container '')\n | object.spec.replicas.frobnicate() <= 5\n | ...............................^",
		"39 error policy/broken: ValidatingAdmissionPolicy 'broken' with binding 'broken' denied request: expression 'object.spec.replicas < 'five'' resulted in error: no such overload",
	},
	"libraries": {
		"47 error policy/libraries: ValidatingAdmissionPolicy 'libraries' with binding 'libraries' denied request: container name: a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
		"47 error policy/libraries: ValidatingAdmissionPolicy 'libraries' with binding 'libraries' denied request: docs URL scheme is http",
		"47 error policy/libraries: ValidatingAdmissionPolicy 'libraries' with binding 'libraries' denied request: image version is 2.3",
		"47 error policy/libraries: ValidatingAdmissionPolicy 'libraries' with binding 'libraries' denied request: memory limit 2Gi is not below 1Gi",
		"47 error policy/libraries: ValidatingAdmissionPolicy 'libraries' with binding 'libraries' denied request: peer 192.168.0.1 is outside 10.0.0.0/8 (IPv4)",
		"47 error policy/libraries: ValidatingAdmissionPolicy 'libraries' with binding 'libraries' denied request: ports sum to 523",
		"47 error policy/libraries: ValidatingAdmissionPolicy 'libraries' with binding 'libraries' denied request: the requester may not delete deployments here",
		"47 error policy/libraries: ValidatingAdmissionPolicy 'libraries' with binding 'libraries' denied request: version 1.4.2 has major 1",
	},
	"libraries-authorizer-allow": {
		"47 error policy/libraries: ValidatingAdmissionPolicy 'libraries' with binding 'libraries' denied request: container name: a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
		"47 error policy/libraries: ValidatingAdmissionPolicy 'libraries' with binding 'libraries' denied request: docs URL scheme is http",
		"47 error policy/libraries: ValidatingAdmissionPolicy 'libraries' with binding 'libraries' denied request: image version is 2.3",
		"47 error policy/libraries: ValidatingAdmissionPolicy 'libraries' with binding 'libraries' denied request: memory limit 2Gi is not below 1Gi",
		"47 error policy/libraries: ValidatingAdmissionPolicy 'libraries' with binding 'libraries' denied request: peer 192.168.0.1 is outside 10.0.0.0/8 (IPv4)",
		"47 error policy/libraries: ValidatingAdmissionPolicy 'libraries' with binding 'libraries' denied request: ports sum to 523",
		"47 error policy/libraries: ValidatingAdmissionPolicy 'libraries' with binding 'libraries' denied request: version 1.4.2 has major 1",
	},
	"required-labels": {
		"27 error policy/require-owner: ValidatingAdmissionPolicy 'require-owner' with binding 'require-owner' denied request: every object needs an owner label",
		"31 error policy/require-owner: ValidatingAdmissionPolicy 'require-owner' with binding 'require-owner' denied request: owner bob must end in .company.com",
	},
	"bad-config": {
		"10 error policy/misspelled: ValidatingAdmissionPolicy \"misspelled\" does not decode as admissionregistration.k8s.io/v1: unknown field \"spec.validation\"; the API server would reject this policy",
		"18 error policy/unknown-param: paramKind example.com/v1, Kind=Limits is neither built in nor defined by a CustomResourceDefinition in the input: the API server would deny every request this policy matches (failurePolicy Fail) until the kind exists",
		"37 warning policy/does-not-exist: ValidatingAdmissionPolicyBinding \"dangling\" refers to ValidatingAdmissionPolicy \"does-not-exist\", which is neither in the input nor under --policy; the API server ignores the binding until the policy exists",
		"40 error policy/unknown-param: ValidatingAdmissionPolicy 'unknown-param' denied request: failed to configure policy: failed to find resource referenced by paramKind: 'example.com/v1, Kind=Limits'",
		// No policy matches the Widget at line 46: its kind's guess decides
		// nothing, so there is no policy/unknown-kind note.
	},
	"resource-rules": {
		"112 error policy/all: ValidatingAdmissionPolicy 'all' with binding 'all' denied request: all: apps/v1/deployments",
		"112 error policy/all-subresources: ValidatingAdmissionPolicy 'all-subresources' with binding 'all-subresources' denied request: all-subresources: deployments",
		"116 error policy/all: ValidatingAdmissionPolicy 'all' with binding 'all' denied request: all: /v1/configmaps",
		"116 error policy/all-subresources: ValidatingAdmissionPolicy 'all-subresources' with binding 'all-subresources' denied request: all-subresources: configmaps",
		"116 error policy/core-and-apps-but-deployments: ValidatingAdmissionPolicy 'core-and-apps-but-deployments' with binding 'core-and-apps-but-deployments' denied request: core-and-apps-but-deployments: ConfigMap special",
		"116 error policy/named: ValidatingAdmissionPolicy 'named' with binding 'named' denied request: named",
		"120 error policy/all: ValidatingAdmissionPolicy 'all' with binding 'all' denied request: all: /v1/configmaps",
		"120 error policy/all-subresources: ValidatingAdmissionPolicy 'all-subresources' with binding 'all-subresources' denied request: all-subresources: configmaps",
		"124 error policy/all: ValidatingAdmissionPolicy 'all' with binding 'all' denied request: all: networking.k8s.io/v1/networkpolicies",
		"124 error policy/all-subresources: ValidatingAdmissionPolicy 'all-subresources' with binding 'all-subresources' denied request: all-subresources: networkpolicies",
		"128 error policy/all: ValidatingAdmissionPolicy 'all' with binding 'all' denied request: all: rbac.authorization.k8s.io/v1/clusterroles",
		"128 error policy/all-subresources: ValidatingAdmissionPolicy 'all-subresources' with binding 'all-subresources' denied request: all-subresources: clusterroles",
		"128 error policy/cluster-scoped: ValidatingAdmissionPolicy 'cluster-scoped' with binding 'cluster-scoped' denied request: cluster-scoped: ClusterRole",
	},
	"selectors": {
		"60 error policy/by-namespace: ValidatingAdmissionPolicy 'by-namespace' with binding 'env-prod' denied request: by-namespace: prod",
		"66 error policy/by-namespace: ValidatingAdmissionPolicy 'by-namespace' with binding 'env-prod' denied request: by-namespace: prod-a",
		"66 error policy/team-a-only: ValidatingAdmissionPolicy 'team-a-only' with binding 'not-skipped' denied request: team-a-only: prod-a",
		"70 error policy/by-namespace: ValidatingAdmissionPolicy 'by-namespace' with binding 'env-prod' denied request: by-namespace: prod-a-skipped",
		"74 warning policy/by-namespace: Validation failed for ValidatingAdmissionPolicy 'by-namespace' with binding 'dev-by-name': by-namespace: dev-b",
		"83 error policy/by-namespace: ValidatingAdmissionPolicy 'by-namespace' with binding 'env-prod' denied request: by-namespace: cluster-a",
		"83 warning policy/by-namespace: Validation failed for ValidatingAdmissionPolicy 'by-namespace' with binding 'dev-by-name': by-namespace: cluster-a",
		"83 error policy/team-a-only: ValidatingAdmissionPolicy 'team-a-only' with binding 'not-skipped' denied request: team-a-only: cluster-a",
	},
	"match-policy": {
		"78 error policy/equivalent: ValidatingAdmissionPolicy 'equivalent' with binding 'equivalent' denied request: equivalent: w1 seen as example.com/v1, request.resource v1, request.kind v1, requested v1",
		"78 error policy/exact: ValidatingAdmissionPolicy 'exact' with binding 'exact' denied request: exact: w1",
		"82 error policy/equivalent: ValidatingAdmissionPolicy 'equivalent' with binding 'equivalent' denied request: equivalent: w2 seen as example.com/v1, request.resource v1, request.kind v1, requested v2",
		"90 error policy/events: ValidatingAdmissionPolicy 'events' with binding 'events' denied request: events: events.k8s.io/v1 started",
	},
}
