package main

// kiln's single-object rules written as ValidatingAdmissionPolicies (rules/policies).
import _ "github.com/kilnhq/kiln/rules/policies"
