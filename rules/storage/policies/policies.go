// Package policies embeds the storage family's rules written as
// ValidatingAdmissionPolicies (one *.yaml each); package rules/policies
// runs them. A rule of the family is its policy here, its fixtures under
// ../testdata/<rule>/ and, for Go rules, its code in ../.
package policies

import "embed"

// Files are the family's policies.
//
//go:embed *.yaml
var Files embed.FS
