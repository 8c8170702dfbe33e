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
	m := &merger{res: &rules.Result{}, seen: map[int]string{}}
	for i, r := range reports {
		rep, err := readReport(r, name(i))
		if err != nil {
			return nil, m.in, err
		}
		if err := m.claim(rep.Shard, name(i)); err != nil {
			return nil, m.in, err
		}
		m.add(rep)
	}
	if len(reports) == 0 {
		return nil, m.in, fmt.Errorf("no reports to merge: name the -f json reports of every shard")
	}
	if err := m.complete(); err != nil {
		return nil, m.in, err
	}
	return m.result()
}

// merger combines the shards' reports as they are read.
type merger struct {
	res     *rules.Result
	in      Inputs
	seen    map[int]string // the name of each shard's report, by index
	count   int            // the shards of the run (0 before the first report)
	skipped int
}

// readReport decodes one shard's JSON report (version 1).
func readReport(r io.Reader, name string) (mergedReport, error) {
	var rep mergedReport
	dec := json.NewDecoder(r)
	if err := dec.Decode(&rep); err != nil {
		return rep, fmt.Errorf("%s: not a kiln -f json report: %v", name, err)
	}
	if rep.Version != 1 {
		return rep, fmt.Errorf("%s: report version %d: kiln report merge reads version 1", name, rep.Version)
	}
	return rep, nil
}

// claim records that the report named name is shard ("I/N"), refusing a
// shard of another run or one met before.
func (m *merger) claim(shard, name string) error {
	index, n, err := parseShard(shard)
	if err != nil {
		return fmt.Errorf("%s: %v", name, err)
	}
	switch {
	case m.count != 0 && n != m.count:
		return fmt.Errorf("%s is shard %s, but %s is of %d shards: merge the shards of one run", name, shard, m.seen[firstKey(m.seen)], m.count)
	case m.seen[index] != "":
		return fmt.Errorf("%s and %s are both shard %d/%d: merge each shard once", m.seen[index], name, index, n)
	}
	m.count, m.seen[index] = n, name
	return nil
}

// add joins a shard's findings, input errors and counts to the run's.
func (m *merger) add(rep mergedReport) {
	for _, f := range rep.Findings {
		m.res.Findings = append(m.res.Findings, f.finding())
		if f.BaselineState != "" {
			m.in.Baseline = "the shards' baseline"
		}
	}
	for _, e := range rep.Errors {
		m.in.Errors = append(m.in.Errors, &manifest.Error{Pos: manifest.Position{File: e.File, Line: e.Line, Column: e.Column}, Msg: e.Message})
	}
	s := rep.Summary
	t := &m.res.Summary
	t.Files += s.Files
	t.Objects += s.Objects
	t.Errors += s.Errors
	t.Warnings += s.Warnings
	t.Infos += s.Infos
	t.Suppressed += s.Suppressed
	t.Assumed += s.Assumed
	t.Baselined += s.Baselined
	m.skipped += s.Skipped
	m.in.Charts += s.Charts
	m.in.Kustomizations += s.Kustomizations
	m.in.FluxKustomizations += s.FluxKustomizations
	m.in.ArgoCDApplications += s.ArgoCDApplications
	m.in.BaselineFixed += s.BaselineFixed
	for _, c := range s.Catalog {
		if !slices.Contains(m.res.Catalog, c) {
			m.res.Catalog = append(m.res.Catalog, c)
		}
	}
	if s.Baselined > 0 {
		m.in.Baseline = "the shards' baseline"
	}
}

// complete reports the shards of the run that no report is of.
func (m *merger) complete() error {
	var missing []string
	for i := 1; i <= m.count; i++ {
		if m.seen[i] == "" {
			missing = append(missing, strconv.Itoa(i))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("shard %s of %d missing: merge the reports of every shard", strings.Join(missing, ", "), m.count)
	}
	return nil
}

// result is the whole run: the findings in the engine's order, the
// catalog entries and input errors sorted, a placeholder per skipped file.
func (m *merger) result() (*rules.Result, Inputs, error) {
	rules.SortFindings(m.res.Findings)
	slices.Sort(m.res.Catalog)
	manifest.SortErrors(m.in.Errors)
	m.in.Skipped = make([]manifest.Skipped, m.skipped)
	for i := range m.in.Skipped {
		m.in.Skipped[i].Reason = "listed in the shards' reports"
	}
	return m.res, m.in, nil
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
