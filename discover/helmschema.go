package discover

import (
	"bytes"
	"fmt"
	"net/url"
	"path"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"helm.sh/helm/v4/pkg/chart/common"
	chart "helm.sh/helm/v4/pkg/chart/v2"
)

// validateValues checks values against the chart's values.schema.json and
// its dependencies' as Helm's ValidateAgainstSchema does (same messages),
// but offline: a $ref by http(s) URL is read from the chart's own files
// where the URL names one (a library chart's schema, referenced by its
// raw.githubusercontent.com address, is in charts/ of the packaged chart),
// and is otherwise taken as "anything goes" and said in a note. No
// connection is ever opened.
func validateValues(ch *chart.Chart, values common.Values) ([]string, error) {
	var sb strings.Builder
	var notes []string
	if ch.Schema != nil {
		loader := &chartSchemaLoader{files: chartFiles(ch, "")}
		if err := validateOne(values, ch.Schema, loader); err != nil {
			fmt.Fprintf(&sb, "%s:\n", ch.Name())
			sb.WriteString(err.Error())
		}
		for _, u := range loader.skipped {
			notes = append(notes, fmt.Sprintf("chart %q: the values schema's $ref %s is not checked: kiln never fetches while it lints, and the chart holds no file that URL names", ch.Name(), u))
		}
	}
	for _, sub := range ch.Dependencies() {
		raw, ok := values[sub.Name()]
		if !ok || raw == nil {
			continue
		}
		subValues, ok := raw.(map[string]any)
		if !ok {
			fmt.Fprintf(&sb, "%s:\ninvalid type for values: expected object (map), got %T\n", sub.Name(), raw)
			continue
		}
		n, err := validateValues(sub, subValues)
		if err != nil {
			sb.WriteString(err.Error())
		}
		notes = append(notes, n...)
	}
	if sb.Len() > 0 {
		return notes, fmt.Errorf("values don't meet the specifications of the schema(s) in the following chart(s):\n%s", sb.String())
	}
	return notes, nil
}

// validateOne is Helm's ValidateAgainstSingleSchema with kiln's loaders.
func validateOne(values common.Values, schemaJSON []byte, l *chartSchemaLoader) (reterr error) {
	defer func() {
		if r := recover(); r != nil {
			reterr = fmt.Errorf("unable to validate schema: %s", r)
		}
	}()
	schema, err := jsonschema.UnmarshalJSON(bytes.NewReader(schemaJSON))
	if err != nil {
		return err
	}
	compiler := jsonschema.NewCompiler()
	compiler.UseLoader(jsonschema.SchemeURLLoader{
		"file":  jsonschema.FileLoader{},
		"http":  l,
		"https": l,
		"urn":   permissiveLoader{},
	})
	if err := compiler.AddResource("file:///values.schema.json", schema); err != nil {
		return err
	}
	validator, err := compiler.Compile("file:///values.schema.json")
	if err != nil {
		return err
	}
	if err := validator.Validate(values.AsMap()); err != nil {
		// Helm's JSONSchemaValidationError.Error, word for word.
		msg := strings.TrimPrefix(err.Error(), "jsonschema validation failed with 'file:///values.schema.json#'\n")
		return fmt.Errorf("%s\n", msg)
	}
	return nil
}

// permissiveLoader answers every URL with the schema `true`, as Helm's urn
// loader does for a URN it cannot resolve.
type permissiveLoader struct{}

func (permissiveLoader) Load(string) (any, error) {
	return jsonschema.UnmarshalJSON(strings.NewReader("true"))
}

// chartSchemaLoader reads an http(s) $ref from the chart's files: the file
// whose path ends with the most trailing segments of the URL's path (at
// least its directory and name), among the chart's and its dependencies'
// (charts/<name>/...). An URL it cannot place is `true` and remembered.
type chartSchemaLoader struct {
	files   map[string][]byte // chart-relative path → content
	skipped []string
}

func (l *chartSchemaLoader) Load(rawURL string) (any, error) {
	u, err := url.Parse(rawURL)
	if err == nil {
		if data := l.find(u.Path); data != nil {
			return jsonschema.UnmarshalJSON(bytes.NewReader(data))
		}
	}
	l.skipped = append(l.skipped, rawURL)
	return permissiveLoader{}.Load(rawURL)
}

func (l *chartSchemaLoader) find(urlPath string) []byte {
	want := strings.Split(strings.Trim(path.Clean(urlPath), "/"), "/")
	best, bestScore, tie := "", 1, false
	for name := range l.files {
		have := strings.Split(name, "/")
		score := 0
		for score < len(want) && score < len(have) && want[len(want)-1-score] == have[len(have)-1-score] {
			score++
		}
		switch {
		case score > bestScore:
			best, bestScore, tie = name, score, false
		case score == bestScore && best != "":
			tie = true
		}
	}
	if best == "" || tie {
		return nil
	}
	return l.files[best]
}

// chartFiles lists a chart's files by chart-relative path, its
// dependencies' under charts/<name>/.
func chartFiles(ch *chart.Chart, prefix string) map[string][]byte {
	out := map[string][]byte{}
	for _, f := range ch.Raw {
		out[prefix+f.Name] = f.Data
	}
	if ch.Schema != nil {
		out[prefix+"values.schema.json"] = ch.Schema
	}
	for _, d := range ch.Dependencies() {
		for k, v := range chartFiles(d, prefix+"charts/"+d.Name()+"/") {
			out[k] = v
		}
	}
	return out
}
