package main

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestPSAPlanCLI(t *testing.T) {
	const in = "../../rules/psa/testdata/plan/input.yaml"
	none := noConfig(t)
	code, stdout, stderr := runKiln(t, "", "psa", "plan", "--config", none, "-f", "json", in)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var plan struct {
		Target     string `json:"target"`
		Namespaces []struct {
			Name, Level string
		} `json:"namespaces"`
	}
	if err := json.Unmarshal([]byte(stdout), &plan); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, stdout)
	}
	if plan.Target != "v1.37" || len(plan.Namespaces) != 4 || plan.Namespaces[2].Name != "shop" || plan.Namespaces[2].Level != "restricted" {
		t.Errorf("unexpected plan: %+v", plan)
	}
	// --kube-version pins the versions.
	_, stdout, _ = runKiln(t, "", "psa", "plan", "--config", none, "--kube-version", "1.31", in)
	if !strings.HasPrefix(stdout, "Pod Security plan for v1.31\n") || !strings.Contains(stdout, "enforce-version=v1.31") {
		t.Errorf("--kube-version 1.31 not applied:\n%s", stdout)
	}
	for _, args := range [][]string{
		{"psa", "plan", "-f", "yaml", in},
		{"psa", "plan", "does-not-exist.yaml"},
	} {
		if code, _, stderr := runKiln(t, "", args...); code != exitInput || stderr == "" {
			t.Errorf("%v: exit %d, want %d with a message", args, code, exitInput)
		}
	}
}

// TestPSAPlanSpecTarget: without --kube-version, the plan is for the App
// spec's target.kubernetes; the flag still wins.
func TestPSAPlanSpecTarget(t *testing.T) {
	dir := writeFiles(t, map[string]string{"app.yaml": `apiVersion: kiln.dev/v1alpha1
kind: App
metadata: {name: shop, namespace: shop}
spec:
  target: {kubernetes: "1.31"}
  namespace:
    security: {enforce: baseline}
  services:
    web:
      containers: [{name: app, image: ghcr.io/acme/shop:1.4.2}]
`})
	code, stdout, stderr := runKiln(t, "", "psa", "plan", dir)
	if code != exitOK || !strings.HasPrefix(stdout, "Pod Security plan for v1.31\n") {
		t.Errorf("exit %d, want the spec's target v1.31:\n%s%s", code, stdout, stderr)
	}
	_, stdout, _ = runKiln(t, "", "psa", "plan", "--kube-version", "1.33", dir)
	if !strings.HasPrefix(stdout, "Pod Security plan for v1.33\n") {
		t.Errorf("--kube-version should win over the spec's target:\n%s", stdout)
	}
}
