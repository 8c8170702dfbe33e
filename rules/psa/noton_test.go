package psa

import (
	"strings"
	"testing"

	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules"
)

// TestNotOnBefore123: an API server older than 1.23 runs no Pod Security
// admission, so kiln judges nothing there (not even a Namespace's invalid
// label) and notes once per kind, at its first object, what it left; from
// 1.23 the same input is judged.
func TestNotOnBefore123(t *testing.T) {
	deployment := privilegedProbe(restrictedDeployment)
	pod := strings.NewReplacer("apps/v1", "v1", "kind: Deployment", "kind: Pod", "  template:\n    spec:\n", "").Replace(deployment)
	pod = strings.ReplaceAll(pod, "\n    ", "\n")
	src := namespace("pod-security.kubernetes.io/enforce: strict") + deployment + "---\n" +
		strings.Replace(pod, "name: web", "name: a", 1) + "---\n" + strings.Replace(pod, "name: web", "name: b", 1)
	tests := []struct {
		kube string
		want string
	}{
		{"1.16", "notes"},
		{"1.22", "notes"},
		{"1.23", "judged"},
		{"1.37", "judged"},
	}
	for _, tc := range tests {
		t.Run(tc.kube, func(t *testing.T) {
			opts := rules.DefaultOptions()
			kube, err := manifest.ParseKubeVersion(tc.kube)
			if err != nil {
				t.Fatal(err)
			}
			opts.KubeVersion = kube
			res := lint(t, src, opts)
			got := describeFindings(res)
			if tc.want == "judged" {
				if ids := ruleIDs(res, rules.Error); !ids["psa/privileged"] || !ids[InvalidLabelRule] || ids[NotOnRule] {
					t.Errorf("at %s, want Pod Security judged:\n%s", tc.kube, got)
				}
				return
			}
			want := "Kubernetes " + tc.kube + " does not run Pod Security admission"
			var notes []string
			for _, f := range res.Findings {
				if f.Rule != NotOnRule || f.Severity != rules.Info || !strings.HasPrefix(f.Message, want) {
					t.Fatalf("at %s, want only %s notes, got:\n%s", tc.kube, NotOnRule, got)
				}
				notes = append(notes, f.Object.Kind+": "+f.Message[strings.Index(f.Message, "): ")+3:strings.Index(f.Message, " not judged")])
			}
			if w := "Deployment: this Deployment is|Pod: this Pod and 1 more are"; strings.Join(notes, "|") != w {
				t.Errorf("at %s, notes %q, want %q", tc.kube, strings.Join(notes, "|"), w)
			}
		})
	}
}
