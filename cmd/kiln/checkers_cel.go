package main

// The "cel" checker: ValidatingAdmissionPolicies and bindings in the input and under --policy.
import _ "github.com/kilnhq/kiln/rules/cel"
