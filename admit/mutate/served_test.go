package mutate_test

import (
	"os"
	"strings"
	"testing"

	"github.com/kilnhq/kiln/lint"
	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules"
	"github.com/kilnhq/kiln/rules/checkers"
)

// TestServedVersions applies a policy only where the target Kubernetes
// version serves its apiVersion by default (the generated table of
// admit/servedversions: v1alpha1 1.32-1.33 and v1beta1 from 1.34 behind
// --runtime-config, v1 from 1.36); elsewhere the server refuses the policy
// and its binding (schema/unserved-version), so nothing is mutated.
func TestServedVersions(t *testing.T) {
	data, err := os.ReadFile("testdata/team.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		version, kube string
		applied       bool
	}{
		{"v1", "1.37", true},
		{"v1", "1.36", true},
		{"v1", "1.35", false},
		{"v1", "1.33", false},
		{"v1beta1", "1.37", false},
		{"v1beta1", "1.34", false},
		{"v1alpha1", "1.33", false},
		{"v1alpha1", "1.32", false},
	} {
		t.Run(tc.version+"@"+tc.kube, func(t *testing.T) {
			src := strings.ReplaceAll(string(data), "admissionregistration.k8s.io/v1\nkind: MutatingAdmissionPolicy", "admissionregistration.k8s.io/"+tc.version+"\nkind: MutatingAdmissionPolicy")
			objs, errs := manifest.Parse("team.yaml", []byte(src))
			if len(errs) > 0 {
				t.Fatal(errs)
			}
			opts := rules.DefaultOptions()
			if opts.KubeVersion, err = manifest.ParseKubeVersion(tc.kube); err != nil {
				t.Fatal(err)
			}
			res, err := lint.Judge(&rules.Engine{Checkers: checkers.All(), Options: opts}, objs, []rules.FileObjects{{File: "team.yaml"}})
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]bool{}
			for _, f := range res.Findings {
				got[f.Object.Kind+" "+f.Rule] = true
			}
			if got["ConfigMap mutation/applied"] != tc.applied {
				t.Errorf("applied = %v, want %v (findings %v)", !tc.applied, tc.applied, got)
			}
			// Not applied: the VAP denies the ConfigMap without a team
			// label (the VAP needs 1.30, served at every version here).
			if got["ConfigMap policy/require-team"] == tc.applied {
				t.Errorf("policy/require-team reported = %v, want %v", !tc.applied, !tc.applied)
			}
			if !tc.applied && !got["MutatingAdmissionPolicy schema/unserved-version"] {
				t.Errorf("no schema/unserved-version on the policy: %v", got)
			}
		})
	}
}
