package report

import (
	"io"
	"net/url"
	"path"
	"path/filepath"
	"strings"

	"github.com/kilnhq/kiln/rules"
)

// SARIF 2.1.0 (OASIS, errata 01), the subset kiln fills in. Field order
// follows the specification's examples; every slice is emitted in a fixed order.
const (
	sarifSchema  = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
	sarifVersion = "2.1.0"
	// srcRoot is the base that relative artifact URIs resolve against: the
	// directory kiln ran in, which a consumer (e.g. GitHub code scanning) maps to the checkout.
	srcRoot = "%SRCROOT%"
	// informationURI names kiln's home page in tool.driver.
	informationURI = "https://github.com/kilnhq/kiln"
)

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name           string      `json:"name"`
	InformationURI string      `json:"informationUri"`
	Version        string      `json:"version,omitempty"`
	Rules          []sarifRule `json:"rules"`
}

type sarifRule struct {
	ID                   string               `json:"id"`
	ShortDescription     *sarifMessage        `json:"shortDescription,omitempty"`
	FullDescription      *sarifMessage        `json:"fullDescription,omitempty"`
	Help                 *sarifMessage        `json:"help,omitempty"`
	DefaultConfiguration sarifConfiguration   `json:"defaultConfiguration"`
	Properties           *sarifRuleProperties `json:"properties,omitempty"`
}

type sarifRuleProperties struct {
	Tags []string `json:"tags,omitempty"`
}

type sarifConfiguration struct {
	Level string `json:"level"`
}

// sarifMessage serves as message and multiformatMessageString.
type sarifMessage struct {
	Text     string `json:"text"`
	Markdown string `json:"markdown,omitempty"`
}

type sarifArtifact struct {
	Location sarifArtifactLocation `json:"location"`
	Roles    []string              `json:"roles"`
}

type sarifArtifactLocation struct {
	URI       string `json:"uri"`
	URIBaseID string `json:"uriBaseId,omitempty"`
	Index     *int   `json:"index,omitempty"`
}

type sarifResult struct {
	RuleID       string             `json:"ruleId"`
	RuleIndex    *int               `json:"ruleIndex,omitempty"`
	Level        string             `json:"level"`
	Message      sarifMessage       `json:"message"`
	Locations    []sarifLocation    `json:"locations,omitempty"`
	Suppressions []sarifSuppression `json:"suppressions"`
	// BaselineState is "new" or "unchanged" when the run had a baseline.
	BaselineState string                 `json:"baselineState,omitempty"`
	Properties    *sarifResultProperties `json:"properties,omitempty"`
}

type sarifResultProperties struct {
	// Field is the path of the field at fault, as in the JSON report.
	Field string `json:"field"`
}

type sarifLocation struct {
	PhysicalLocation *sarifPhysicalLocation `json:"physicalLocation,omitempty"`
	LogicalLocations []sarifLogicalLocation `json:"logicalLocations,omitempty"`
}

type sarifPhysicalLocation struct {
	ArtifactLocation sarifArtifactLocation `json:"artifactLocation"`
	Region           *sarifRegion          `json:"region,omitempty"`
}

type sarifRegion struct {
	StartLine   int `json:"startLine"`
	StartColumn int `json:"startColumn,omitempty"`
}

type sarifLogicalLocation struct {
	Name               string `json:"name"`
	FullyQualifiedName string `json:"fullyQualifiedName"`
	Kind               string `json:"kind"`
}

// sarifInvocation says whether the run could read its inputs: an upload
// with input errors must not look like a clean run that closes alerts.
type sarifInvocation struct {
	ExecutionSuccessful        bool                `json:"executionSuccessful"`
	ToolExecutionNotifications []sarifNotification `json:"toolExecutionNotifications"`
}

type sarifNotification struct {
	Level     string          `json:"level"`
	Message   sarifMessage    `json:"message"`
	Locations []sarifLocation `json:"locations,omitempty"`
}

func sarifInvocationOf(in Inputs) sarifInvocation {
	inv := sarifInvocation{ExecutionSuccessful: len(in.Errors) == 0, ToolExecutionNotifications: []sarifNotification{}}
	add := func(level string, errs []error) {
		for _, e := range (Inputs{Errors: errs}).errors() {
			n := sarifNotification{Level: level, Message: sarifMessage{Text: e.Msg}}
			if e.Pos.File != "" {
				pl := &sarifPhysicalLocation{ArtifactLocation: artifactURI(e.Pos.File)}
				if e.Pos.Line > 0 {
					pl.Region = &sarifRegion{StartLine: e.Pos.Line, StartColumn: e.Pos.Column}
				}
				n.Locations = []sarifLocation{{PhysicalLocation: pl}}
			}
			inv.ToolExecutionNotifications = append(inv.ToolExecutionNotifications, n)
		}
	}
	add("error", in.Errors)
	add("warning", in.Warnings)
	return inv
}

type sarifSuppression struct {
	Kind          string `json:"kind"`
	Justification string `json:"justification,omitempty"`
}

// sarifLevel maps a severity to a SARIF level.
func sarifLevel(s rules.Severity) string {
	switch s {
	case rules.Error:
		return "error"
	case rules.Warning:
		return "warning"
	}
	return "note"
}

// artifactURI turns a file path into a SARIF URI: relative paths become
// forward-slash URI references against %SRCROOT%, absolute ones file: URIs.
func artifactURI(file string) sarifArtifactLocation {
	p := filepath.ToSlash(file)
	if filepath.IsAbs(file) || strings.HasPrefix(p, "/") {
		if !strings.HasPrefix(p, "/") { // a Windows drive: C:/x → /C:/x
			p = "/" + p
		}
		return sarifArtifactLocation{URI: (&url.URL{Scheme: "file", Path: p}).String()}
	}
	return sarifArtifactLocation{URI: (&url.URL{Path: path.Clean(p)}).String(), URIBaseID: srcRoot}
}

// writeSARIF writes one run: the rules that ran, every input file as an
// artifact, and every finding as a result (suppressed ones with their
// suppression). Results are streamed one at a time.
func writeSARIF(w io.Writer, res *rules.Result, opts Options) error {
	driver := sarifDriver{Name: "kiln", InformationURI: informationURI, Version: opts.ToolVersion, Rules: []sarifRule{}}
	ruleIndex := map[string]int{}
	for _, r := range res.Rules {
		if r == nil {
			continue
		}
		if _, dup := ruleIndex[r.ID]; dup {
			continue
		}
		ruleIndex[r.ID] = len(driver.Rules)
		driver.Rules = append(driver.Rules, sarifRuleOf(r))
	}
	var artifacts []sarifArtifact
	fileIndex := map[string]int{}
	for _, fo := range res.Files {
		if _, dup := fileIndex[fo.File]; dup || fo.File == "" {
			continue
		}
		fileIndex[fo.File] = len(artifacts)
		artifacts = append(artifacts, sarifArtifact{Location: artifactURI(fo.File), Roles: []string{"analysisTarget"}})
	}

	js := newJSONStream(w)
	js.raw("{\n")
	js.field(1, "$schema", sarifSchema, false)
	js.field(1, "version", sarifVersion, false)
	js.raw(indent(1) + `"runs": [` + "\n" + indent(2) + "{\n")
	js.field(3, "tool", sarifTool{Driver: driver}, false)
	js.field(3, "invocations", []sarifInvocation{sarifInvocationOf(opts.Inputs)}, false)
	if len(artifacts) > 0 {
		js.field(3, "artifacts", artifacts, false)
	}
	err := js.items(3, "results", func(emit func(any)) error {
		return res.Each(func(f rules.Finding) error {
			r := sarifResultOf(f, ruleIndex, fileIndex)
			r.BaselineState = baselineState(f, opts.Inputs)
			emit(r)
			return js.err
		})
	}, false)
	if err != nil {
		return err
	}
	js.field(3, "columnKind", "unicodeCodePoints", true) // yaml.v3 counts columns in characters
	js.raw(indent(2) + "}\n" + indent(1) + "]\n}\n")
	return js.flush()
}

// sarifResultOf turns a finding into a result, pointing at its rule and
// artifact by index when the run describes them.
func sarifResultOf(f rules.Finding, ruleIndex, fileIndex map[string]int) sarifResult {
	r := sarifResult{
		RuleID: f.Rule, Level: sarifLevel(f.Severity),
		Message:      sarifMessage{Text: f.Message},
		Suppressions: []sarifSuppression{},
	}
	if i, ok := ruleIndex[f.Rule]; ok {
		r.RuleIndex = &i
	}
	var loc sarifLocation
	if f.Pos.File != "" {
		pl := &sarifPhysicalLocation{ArtifactLocation: artifactURI(f.Pos.File)}
		if i, ok := fileIndex[f.Pos.File]; ok {
			pl.ArtifactLocation.Index = &i
		}
		if f.Pos.Line > 0 {
			pl.Region = &sarifRegion{StartLine: f.Pos.Line}
			if f.Pos.Column > 0 {
				pl.Region.StartColumn = f.Pos.Column
			}
		}
		loc.PhysicalLocation = pl
	}
	if f.Object.Kind != "" || f.Object.Name != "" {
		loc.LogicalLocations = []sarifLogicalLocation{{
			Name: f.Object.Name, FullyQualifiedName: f.Object.String(), Kind: "resource",
		}}
	}
	if loc.PhysicalLocation != nil || loc.LogicalLocations != nil {
		r.Locations = []sarifLocation{loc}
	}
	if s := f.Suppressed; s != nil {
		kind := "external" // .kiln.yaml and anything else outside the object
		if s.Kind == "annotation" {
			kind = "inSource"
		}
		r.Suppressions = append(r.Suppressions, sarifSuppression{Kind: kind, Justification: s.Reason})
	}
	if f.Field != "" {
		r.Properties = &sarifResultProperties{Field: f.Field}
	}
	return r
}

// sarifRuleOf describes a rule: its summary, its doc, and a help text in
// Markdown with the failing and passing examples and how to suppress it.
func sarifRuleOf(r *rules.Rule) sarifRule {
	sr := sarifRule{ID: r.ID, DefaultConfiguration: sarifConfiguration{Level: sarifLevel(r.Severity)}}
	if r.Severity == 0 {
		sr.DefaultConfiguration.Level = "error" // the engine's default for an unset severity
	}
	if r.Summary != "" {
		sr.ShortDescription = &sarifMessage{Text: r.Summary}
	}
	doc := strings.TrimSpace(r.Doc)
	if doc == "" {
		doc = r.Summary
	}
	if doc != "" {
		sr.FullDescription = &sarifMessage{Text: doc}
		var md strings.Builder
		md.WriteString(doc)
		if fail := strings.TrimSpace(r.Fail); fail != "" {
			md.WriteString("\n\nFails:\n\n```yaml\n" + fail + "\n```")
		}
		if pass := strings.TrimSpace(r.Pass); pass != "" {
			md.WriteString("\n\nPasses:\n\n```yaml\n" + pass + "\n```")
		}
		md.WriteString("\n\nSuppress on one object with the annotation `" + rules.IgnoreAnnotation + `: "` + r.ID + " # reason\"`.")
		sr.Help = &sarifMessage{Text: doc, Markdown: md.String()}
	}
	tags := []string{"kubernetes"}
	if family, _, _ := strings.Cut(r.ID, "/"); family != "" && family != "kubernetes" {
		tags = append(tags, family)
	}
	sr.Properties = &sarifRuleProperties{Tags: tags}
	return sr
}
