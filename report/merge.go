package report

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules"
)

// Merge reads the JSON reports of the shards of one kiln lint --shard I/N
// run (each shard once, in any order; name names each in errors) and
// combines them into the whole run's findings and inputs: the findings in
// the engine's order, the input errors sorted, the counts added (every
// shard counts what is its own, so the sums are the whole run's). What the
// JSON report does not hold (skipped files' names, each file's objects,
// source lines) is not in the result.
func Merge(reports []io.Reader, name func(i int) string) (*rules.Result, Inputs, error) {
	res := &rules.Result{}
	var in Inputs
	seen := map[int]string{}
	count := 0
	skipped := 0
	for i, r := range reports {
		var rep mergedReport
		dec := json.NewDecoder(r)
		if err := dec.Decode(&rep); err != nil {
			return nil, in, fmt.Errorf("%s: not a kiln -f json report: %v", name(i), err)
		}
		if rep.Version != 1 {
			return nil, in, fmt.Errorf("%s: report version %d: kiln report merge reads version 1", name(i), rep.Version)
		}
		index, n, err := parseShard(rep.Shard)
		if err != nil {
			return nil, in, fmt.Errorf("%s: %v", name(i), err)
		}
		switch {
		case count != 0 && n != count:
			return nil, in, fmt.Errorf("%s is shard %s, but %s is of %d shards: merge the shards of one run", name(i), rep.Shard, seen[firstKey(seen)], count)
		case seen[index] != "":
			return nil, in, fmt.Errorf("%s and %s are both shard %d/%d: merge each shard once", seen[index], name(i), index, n)
		}
		count, seen[index] = n, name(i)
		for _, f := range rep.Findings {
			res.Findings = append(res.Findings, f.finding())
			if f.BaselineState != "" {
				in.Baseline = "the shards' baseline"
			}
		}
		for _, e := range rep.Errors {
			in.Errors = append(in.Errors, &manifest.Error{Pos: manifest.Position{File: e.File, Line: e.Line, Column: e.Column}, Msg: e.Message})
		}
		s := rep.Summary
		t := &res.Summary
		t.Files += s.Files
		t.Objects += s.Objects
		t.Errors += s.Errors
		t.Warnings += s.Warnings
		t.Infos += s.Infos
		t.Suppressed += s.Suppressed
		t.Assumed += s.Assumed
		t.Baselined += s.Baselined
		skipped += s.Skipped
		in.Charts += s.Charts
		in.Kustomizations += s.Kustomizations
		in.FluxKustomizations += s.FluxKustomizations
		in.ArgoCDApplications += s.ArgoCDApplications
		in.BaselineFixed += s.BaselineFixed
		for _, c := range s.Catalog {
			if !slices.Contains(res.Catalog, c) {
				res.Catalog = append(res.Catalog, c)
			}
		}
		if s.Baselined > 0 {
			in.Baseline = "the shards' baseline"
		}
	}
	if len(reports) == 0 {
		return nil, in, fmt.Errorf("no reports to merge: name the -f json reports of every shard")
	}
	var missing []string
	for i := 1; i <= count; i++ {
		if seen[i] == "" {
			missing = append(missing, strconv.Itoa(i))
		}
	}
	if len(missing) > 0 {
		return nil, in, fmt.Errorf("shard %s of %d missing: merge the reports of every shard", strings.Join(missing, ", "), count)
	}
	rules.SortFindings(res.Findings)
	slices.Sort(res.Catalog)
	manifest.SortErrors(in.Errors)
	in.Skipped = make([]manifest.Skipped, skipped)
	for i := range in.Skipped {
		in.Skipped[i].Reason = "listed in the shards' reports"
	}
	return res, in, nil
}

func firstKey(m map[int]string) int {
	for k := range m {
		return k
	}
	return 0
}

// parseShard reads a report's "shard": "I/N".
func parseShard(s string) (index, count int, err error) {
	i, n, ok := strings.Cut(s, "/")
	index, err1 := strconv.Atoi(i)
	count, err2 := strconv.Atoi(n)
	if !ok || err1 != nil || err2 != nil || index < 1 || index > count {
		if s == "" {
			return 0, 0, fmt.Errorf("not the report of a shard (no \"shard\"): merge the -f json reports of kiln lint --shard I/N")
		}
		return 0, 0, fmt.Errorf("shard %q is not I/N", s)
	}
	return index, count, nil
}

// mergedReport is a JSON report as merge reads it.
type mergedReport struct {
	Version  int             `json:"version"`
	Shard    string          `json:"shard"`
	Findings []mergedFinding `json:"findings"`
	Errors   []jsonError     `json:"errors"`
	Summary  jsonSummary     `json:"summary"`
}

type mergedFinding jsonFinding

// finding is the finding the JSON report was written from, as far as it
// says (a finding judged at an assumed level is in its object's namespace).
func (f mergedFinding) finding() rules.Finding {
	out := rules.Finding{Rule: f.Rule, Message: f.Message, Field: f.Field,
		Pos:       manifest.Position{File: f.File, Line: f.Line, Column: f.Column},
		Object:    manifest.Ref{APIVersion: f.Object.APIVersion, Kind: f.Object.Kind, Namespace: f.Object.Namespace, Name: f.Object.Name},
		Baselined: f.BaselineState == "unchanged"}
	out.Severity, _ = rules.ParseSeverity(f.Severity)
	if f.Assumed {
		out.AssumedNamespace = cmpOr(f.Object.Namespace, "default")
	}
	return out
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
