package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"testing"

	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules"
)

// bigResult is a run over 1,000 files of 10 objects with 2 findings each.
func bigResult() *rules.Result {
	res := &rules.Result{Rules: fixture().Rules}
	for i := range 1000 {
		file := fmt.Sprintf("deploy/app-%04d.yaml", i)
		fo := rules.FileObjects{File: file}
		for j := range 10 {
			ref := manifest.Ref{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "ns", Name: fmt.Sprintf("app-%d", j)}
			fo.Objects = append(fo.Objects, ref)
			for k, r := range []string{"psa/runAsNonRoot", "sidecar/native"} {
				res.Findings = append(res.Findings, rules.Finding{
					Rule: r, Severity: rules.Error - rules.Severity(k), Pos: pos(file, j*20+1, k+3), Object: ref,
					Field: "spec.template.spec", Message: `pod or containers "app" must set securityContext.runAsNonRoot=true`,
				})
			}
		}
		res.Files = append(res.Files, fo)
	}
	res.Summary = summarize(res)
	return res
}

func BenchmarkWrite(b *testing.B) {
	res := bigResult()
	for _, format := range Formats {
		b.Run(format, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := Write(io.Discard, format, res, Options{}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(res.Findings))*float64(b.N)/b.Elapsed().Seconds(), "findings/s")
		})
	}
}

// TestJSONStreamMatchesEncoder checks that streaming one finding at a
// time writes exactly what json.Encoder writes for the whole report.
func TestJSONStreamMatchesEncoder(t *testing.T) {
	for _, res := range []*rules.Result{bigResult(), fixture(), empty()} {
		sum := res.Summary
		want := jsonReport{Version: 1, Findings: []jsonFinding{}, Errors: []jsonError{}, Summary: jsonSummary{Files: sum.Files, Objects: sum.Objects,
			Errors: sum.Errors, Warnings: sum.Warnings, Infos: sum.Infos, Suppressed: sum.Suppressed, Assumed: sum.Assumed}}
		for _, f := range res.Active() {
			want.Findings = append(want.Findings, jsonFindingOf(f))
		}
		var wb bytes.Buffer
		enc := json.NewEncoder(&wb)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(want); err != nil {
			t.Fatal(err)
		}
		if got := render(t, "json", res, Options{}); !bytes.Equal(got, wb.Bytes()) {
			t.Errorf("streamed JSON (%d bytes) differs from json.Encoder's (%d bytes)", len(got), wb.Len())
		}
	}
}
