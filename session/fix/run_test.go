package fix

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules"
)

const refusedPod = `apiVersion: v1
kind: Pod
metadata:
  name: web
  namespace: default
spec:
  containers:
  - name: app
    image: registry.example/app:1.0
`

// TestRunRefusesWhatMakesANewFinding: Run re-judges its repairs before it
// writes them; the judge here (kiln's checkers, plus a made-up rule that
// fails any seccompProfile on the pod) makes the seccomp repair create a
// finding, so that repair alone is not made and Run says why, while the
// pod's other repairs are written; the finding it would have fixed remains,
// offered no repair.
func TestRunRefusesWhatMakesANewFinding(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "pod.yaml")
	if err := os.WriteFile(p, []byte(refusedPod), 0o644); err != nil {
		t.Fatal(err)
	}
	judge := func(edited map[string][]byte) (*Judged, error) {
		f := ReadFile(p)
		if b, ok := edited[p]; ok {
			f = &File{Path: p, Src: b}
			f.Objects, f.Errs = manifest.Parse(p, b)
		}
		res := lint(t, []*File{f}, nil)
		if bytes.Contains(f.Src, []byte("seccompProfile")) {
			o := f.Objects[0]
			res.Findings = append(res.Findings, rules.Finding{Rule: "test/no-seccomp", Severity: rules.Error,
				Message: "this cluster refuses seccomp profiles", Pos: o.Pos(), Object: o.Ref()})
		}
		return &Judged{Result: res, Plain: []*File{f}}, nil
	}
	wantLine := 0 // the seccomp finding's line in the file as it is
	for _, f := range lint(t, []*File{ReadFile(p)}, nil).Findings {
		if f.Rule == "psa/seccompProfile_restricted" {
			wantLine = f.Pos.Line
		}
	}
	for _, dry := range []bool{false, true} {
		if err := os.WriteFile(p, []byte(refusedPod), 0o644); err != nil {
			t.Fatal(err)
		}
		var info, diff bytes.Buffer
		out, err := Run(RunOptions{Judge: judge, DryRun: dry, Diff: &diff, Info: &info})
		if err != nil {
			t.Fatal(err)
		}
		written, _ := os.ReadFile(p)
		got := string(written)
		if dry {
			got = diff.String()
		}
		if strings.Contains(got, "seccompProfile") || !strings.Contains(got, "runAsNonRoot: true") || !strings.Contains(got, "allowPrivilegeEscalation: false") {
			t.Errorf("dry run %v: want the other repairs without seccompProfile, got:\n%s", dry, got)
		}
		if !strings.Contains(info.String(), "psa/seccompProfile_restricted: Pod/default/web: not repaired: kiln fix sets seccompProfile type RuntimeDefault on the pod and every container where it is unset or not allowed, but then test/no-seccomp: this cluster refuses seccomp profiles") {
			t.Errorf("dry run %v: Run does not say why it refused:\n%s", dry, info.String())
		}
		left := 0
		for _, f := range out.Remaining.Findings {
			if f.Rule == "test/no-seccomp" {
				t.Errorf("dry run %v: the refused repair's finding remains: %v", dry, f)
			}
			if f.Rule == "psa/seccompProfile_restricted" {
				left++
				if f.Fix != nil {
					t.Errorf("dry run %v: the refused repair is still offered", dry)
				}
				if dry && f.Pos.Line != wantLine {
					t.Errorf("dry run: remaining finding at line %d, want the file's line %d", f.Pos.Line, wantLine)
				}
			}
		}
		if left != 1 {
			t.Errorf("dry run %v: %d seccomp findings remain, want 1", dry, left)
		}
	}
}
