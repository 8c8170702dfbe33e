package report

import (
	"io"

	"github.com/kilnhq/kiln/rules"
)

// jsonReport is version 1 of the JSON contract (docs/design.md §4). Its shape is
// stable: fields are only ever added, never renamed or removed. writeJSON
// streams it field by field, one finding at a time.
type jsonReport struct {
	Version int `json:"version"`
	// Shard is the part of the objects a kiln lint --shard run judged
	// ("2/4"); kiln report merge combines the shards.
	Shard    string        `json:"shard,omitempty"`
	Findings []jsonFinding `json:"findings"`
	Errors   []jsonError   `json:"errors"`
	Summary  jsonSummary   `json:"summary"`
}

type jsonFinding struct {
	Rule     string     `json:"rule"`
	Severity string     `json:"severity"`
	Message  string     `json:"message"`
	File     string     `json:"file"`
	Line     int        `json:"line"`
	Column   int        `json:"column"`
	Object   jsonObject `json:"object"`
	Field    string     `json:"field"`
	// Via names what rendered the object (a Flux Kustomization).
	Via string `json:"via,omitempty"`
	// Assumed is present, true, on a finding judged at an assumed Pod
	// Security level (its namespace is not in the input nor configured).
	Assumed bool `json:"assumed,omitempty"`
	// BaselineState is "new" or "unchanged" (in the baseline: it does not
	// fail the run) when the run had a baseline.
	BaselineState string `json:"baselineState,omitempty"`
}

// jsonObject always carries all four keys ("" for a cluster-scoped
// namespace or a finding about no object), so consumers need no checks.
type jsonObject struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace"`
	Name       string `json:"name"`
}

type jsonSummary struct {
	Files      int `json:"files"`
	Objects    int `json:"objects"`
	Errors     int `json:"errors"`
	Warnings   int `json:"warnings"`
	Infos      int `json:"infos"`
	Suppressed int `json:"suppressed"`
	// InputErrors counts the "errors" array: problems reading the inputs.
	InputErrors int `json:"inputErrors"`
	// Skipped counts the files (and kustomizations) not linted.
	Skipped        int `json:"skipped"`
	Charts         int `json:"charts"`
	Kustomizations int `json:"kustomizations"`
	// FluxKustomizations counts the Flux Kustomizations built.
	FluxKustomizations int `json:"fluxKustomizations,omitempty"`
	// ArgoCDApplications counts the Argo CD Application sources rendered.
	ArgoCDApplications int `json:"argocdApplications,omitempty"`
	// Assumed counts the findings judged at an assumed Pod Security level.
	Assumed int `json:"assumed"`
	// Baselined counts the findings a baseline holds (not in errors,
	// warnings, infos); BaselineFixed the baseline's entries no finding
	// matched. Both only when a baseline was used.
	Baselined     int `json:"baselined,omitempty"`
	BaselineFixed int `json:"baselineFixed,omitempty"`
	// Catalog names the entries of kiln's CRD catalog that judged custom
	// resources ("flux v2.9.5"), when any did.
	Catalog []string `json:"catalog,omitempty"`
}

// jsonError is an input error: a file that cannot be read or rendered.
type jsonError struct {
	File    string `json:"file"`
	Line    int    `json:"line"`
	Column  int    `json:"column"`
	Message string `json:"message"`
}

// writeJSON writes the contract: unsuppressed findings in engine order
// ("findings" is [] when there are none), suppressed ones only counted.
func writeJSON(w io.Writer, res *rules.Result, in Inputs) error {
	s := res.Summary
	js := newJSONStream(w)
	js.raw("{\n")
	js.field(1, "version", 1, false)
	if in.Shard != "" {
		js.field(1, "shard", in.Shard, false)
	}
	err := js.items(1, "findings", func(emit func(any)) error {
		return res.Each(func(f rules.Finding) error {
			if f.Suppressed == nil {
				j := jsonFindingOf(f)
				j.BaselineState = baselineState(f, in)
				emit(j)
			}
			return js.err
		})
	}, false)
	if err != nil {
		return err
	}
	errs := in.errors()
	js.array(1, "errors", len(errs), func(i int) any {
		return jsonError{File: errs[i].Pos.File, Line: errs[i].Pos.Line, Column: errs[i].Pos.Column, Message: errs[i].Msg}
	}, false)
	js.field(1, "summary", jsonSummary{Files: s.Files, Objects: s.Objects, Errors: s.Errors,
		Warnings: s.Warnings, Infos: s.Infos, Suppressed: s.Suppressed, InputErrors: len(errs),
		Skipped: len(in.Skipped), Charts: in.Charts, Kustomizations: in.Kustomizations, FluxKustomizations: in.FluxKustomizations, ArgoCDApplications: in.ArgoCDApplications, Assumed: s.Assumed,
		Baselined: s.Baselined, BaselineFixed: in.BaselineFixed, Catalog: res.Catalog}, true)
	js.raw("}\n")
	return js.flush()
}

func jsonFindingOf(f rules.Finding) jsonFinding {
	return jsonFinding{
		Rule: f.Rule, Severity: f.Severity.String(), Message: f.Message,
		File: f.Pos.File, Line: f.Pos.Line, Column: f.Pos.Column,
		Object: jsonObject{APIVersion: f.Object.APIVersion, Kind: f.Object.Kind,
			Namespace: f.Object.Namespace, Name: f.Object.Name},
		Field: f.Field, Assumed: f.AssumedNamespace != "", Via: f.Via,
	}
}
