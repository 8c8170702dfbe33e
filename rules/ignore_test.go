package rules

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/kilnhq/kiln/manifest"
)

// templateChecker reports, on every workload, test/image at each pod
// template's first container image, test/name at the object's name, and
// test/marked at each template's first container name from a Finish
// function (through a Mark, after the object is gone).
func templateChecker() *Checker {
	return &Checker{
		Name: "test",
		Rules: []*Rule{
			{ID: "test/image", Severity: Warning}, {ID: "test/name", Severity: Warning}, {ID: "test/marked", Severity: Warning},
		},
		Prepare: func(p *Pass) (Judge, error) {
			var mu sync.Mutex
			var marks []*Mark
			p.Finish(func() {
				for _, m := range marks {
					p.Report(Diagnostic{Rule: "test/marked", At: m, Message: "marked"})
				}
			})
			return func(o *manifest.Object) {
				p.Reportf("test/name", o, "metadata.name", "name")
				for _, t := range manifest.PodTemplatesOf(o) {
					p.Reportf("test/image", o, t.SpecPath()+".containers[0].image", "image")
					mu.Lock()
					marks = append(marks, p.Mark(o, t.SpecPath()+".containers[0].name"))
					mu.Unlock()
				}
			}, nil
		},
	}
}

// TestPodTemplateIgnores: kiln.dev/ignore in a pod template's metadata
// silences the findings under that template (reported while judging or
// from Finish), not those elsewhere on the object nor on another template;
// its unused entries are kiln/unused-ignore at that annotation.
func TestPodTemplateIgnores(t *testing.T) {
	tests := []struct {
		file string
		want string
	}{
		{"deployment.yaml", `7:3 test/name metadata.name
18:9 test/marked spec.template.spec.containers[0].name [suppressed: vendored chart]
19:9 test/image spec.template.spec.containers[0].image [suppressed: vendored chart]
`},
		{"cronjob.yaml", `4:3 test/name metadata.name
16:13 test/marked spec.jobTemplate.spec.template.spec.containers[0].name [suppressed: ]
17:13 test/image spec.jobTemplate.spec.template.spec.containers[0].image [suppressed: ]
`},
		{"jobset.yaml", `5:3 test/name metadata.name
14:15 test/marked spec.replicatedJobs[0].template.spec.template.spec.containers[0].name
15:15 test/image spec.replicatedJobs[0].template.spec.template.spec.containers[0].image
25:15 test/marked spec.replicatedJobs[1].template.spec.template.spec.containers[0].name
26:15 test/image spec.replicatedJobs[1].template.spec.template.spec.containers[0].image [suppressed: workers run the vendor image]
`},
		{"unused.yaml", `6:3 test/name metadata.name
14:9 kiln/unused-ignore spec.template.metadata.annotations["kiln.dev/ignore"]: kiln.dev/ignore entry "test/imgae" names no rule kiln knows; ` + "`kiln rules`" + ` lists them
14:9 kiln/unused-ignore spec.template.metadata.annotations["kiln.dev/ignore"]: kiln.dev/ignore entry "test/name" suppresses nothing: no finding of that rule on this pod template; remove it (or fix the rule ID)
17:9 test/marked spec.template.spec.containers[0].name
18:9 test/image spec.template.spec.containers[0].image
`},
		{"both.yaml", `6:3 test/name metadata.name [suppressed: whole object]
20:9 test/marked spec.template.spec.containers[0].name [suppressed: whole object]
21:9 test/image spec.template.spec.containers[0].image [suppressed: the template]
`},
		{"pod.yaml", `5:3 test/name metadata.name
7:5 kiln/unused-ignore metadata.annotations["kiln.dev/ignore"]: kiln.dev/ignore entry "test/nope" names no rule kiln knows; ` + "`kiln rules`" + ` lists them
10:5 test/marked spec.containers[0].name [suppressed: pod]
11:5 test/image spec.containers[0].image [suppressed: pod]
`},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			path := filepath.Join("testdata", "ignore", tc.file)
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			for _, drop := range []bool{false, true} {
				eng := &Engine{Checkers: []*Checker{templateChecker()}, DropContent: drop}
				res, err := eng.Run(parse(t, path, string(src)), nil)
				if err != nil {
					t.Fatal(err)
				}
				var got strings.Builder
				for _, f := range res.Findings {
					fmt.Fprintf(&got, "%d:%d %s %s", f.Pos.Line, f.Pos.Column, f.Rule, f.Field)
					if f.Rule == UnusedIgnoreRule.ID {
						fmt.Fprintf(&got, ": %s", f.Message)
					}
					if f.Suppressed != nil {
						fmt.Fprintf(&got, " [suppressed: %s]", f.Suppressed.Reason)
					}
					got.WriteString("\n")
				}
				if got.String() != tc.want {
					t.Errorf("DropContent=%v:\n%s\nwant:\n%s", drop, got.String(), tc.want)
				}
			}
		})
	}
}
