// Package sidecar holds kiln's sidecar rules (sidecar/…): the Go checker of
// sidecar/injected-in-job (mesh proxies injected into Job pods; it needs the
// pod's Namespace), and the data behind the others:
// the table of long-running helper images (helpers.yaml) and how images
// are matched against it (KnownHelper).
//
// The rules themselves are single-object and written as
// ValidatingAdmissionPolicies in rules/policies (sidecar-*.yaml); the
// helper table reaches them as params (helperImages), and their fixtures
// stay here in testdata/<rule>/ (see sidecar_test.go).
package sidecar

// Rule IDs (implemented by the policies in rules/policies).
const (
	ClassicInJob             = "sidecar/classic-in-job"
	RestartPolicyOnContainer = "sidecar/restart-policy-on-container"
	ProbeOnInit              = "sidecar/probe-on-init"
	Needs129                 = "sidecar/needs-1.29"
	NoStartupGate            = "sidecar/no-startup-gate"
	ClassicSidecar           = "sidecar/classic-sidecar"
)
