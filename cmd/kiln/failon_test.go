package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestLintFailOn runs kiln lint --fail-on over errors and warnings.
func TestLintFailOn(t *testing.T) {
	const pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: %s}\nspec:\n  containers:\n  - {name: app, image: ghcr.io/acme/app:1.0}\n"
	const warnNS = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: lab\n  labels:\n    pod-security.kubernetes.io/enforce: privileged\n    pod-security.kubernetes.io/warn: restricted\n---\n"
	errors := strings.Replace(pod, "%s", "shop", 1)
	warnings := warnNS + strings.Replace(pod, "%s", "lab", 1)
	tests := []struct {
		input, failOn string
		code          int
	}{
		{errors, "", 1},
		{errors, "error", 1},
		{errors, "warning", 1},
		{errors, "never", 0},
		{warnings, "", 0},
		{warnings, "error", 0},
		{warnings, "warning", 1},
		{warnings, "never", 0},
		{errors, "sometimes", 2},
	}
	for _, tt := range tests {
		args := []string{"lint", "-"}
		if tt.failOn != "" {
			args = append(args, "--fail-on", tt.failOn)
		}
		var out, errb bytes.Buffer
		code := run(args, strings.NewReader(tt.input), &out, &errb)
		if code != tt.code {
			t.Errorf("%v on %.30q: exit %d, want %d\n%s%s", args, tt.input, code, tt.code, out.String(), errb.String())
		}
	}
}
