package report

import (
	"encoding/json"
	"io"

	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules"
)

// jsonReport is version 1 of the JSON contract (DESIGN §4).
type jsonReport struct {
	Version  int           `json:"version"`
	Findings []jsonFinding `json:"findings"`
	Summary  rules.Summary `json:"summary"`
}

type jsonFinding struct {
	Rule     string       `json:"rule"`
	Severity string       `json:"severity"`
	Message  string       `json:"message"`
	File     string       `json:"file"`
	Line     int          `json:"line"`
	Column   int          `json:"column"`
	Object   manifest.Ref `json:"object"`
	Field    string       `json:"field"`
}

func writeJSON(w io.Writer, res *rules.Result) error {
	out := jsonReport{Version: 1, Findings: []jsonFinding{}, Summary: res.Summary}
	for _, f := range res.Active() {
		out.Findings = append(out.Findings, jsonFinding{
			Rule: f.Rule, Severity: f.Severity.String(), Message: f.Message,
			File: f.Pos.File, Line: f.Pos.Line, Column: f.Pos.Column,
			Object: f.Object, Field: f.Field,
		})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(out)
}
