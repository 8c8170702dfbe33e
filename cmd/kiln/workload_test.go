package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWorkloadFamilyOff: the workload/ rules are on by default, as
// warnings (exit 0 at the default --fail-on), and a team turns them off in
// its .kiln.yaml, the family with a pattern or one rule by its ID.
func TestWorkloadFamilyOff(t *testing.T) {
	const manifest = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      securityContext: {runAsNonRoot: true, runAsUser: 1000, seccompProfile: {type: RuntimeDefault}}
      containers:
      - name: web
        image: nginx:latest
        securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}
`
	tests := []struct {
		name, config string
		want         []string
	}{
		{"default", "", []string{"workload/resources", "workload/image-tag"}},
		{"family off", "rules:\n  \"workload/*\": off\n", nil},
		{"one rule off", "rules:\n  workload/resources: off\n", []string{"workload/image-tag"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, data := range map[string]string{".kiln.yaml": tt.config, "web.yaml": manifest} {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			code, out, errOut := runKiln(t, "", "lint", "--no-cache", filepath.Join(dir, "web.yaml"))
			if code != 0 {
				t.Fatalf("exit %d, want 0 (warnings do not fail the run)\n%s%s", code, out, errOut)
			}
			var got []string
			for _, l := range strings.Split(out, "\n") {
				if f := strings.Fields(l); len(f) > 2 && f[1] == "warning" {
					got = append(got, f[2])
				}
			}
			if strings.Join(got, " ") != strings.Join(tt.want, " ") {
				t.Errorf("warnings %v, want %v\n%s", got, tt.want, out)
			}
		})
	}
}
