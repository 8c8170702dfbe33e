package discover

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"text/template"
)

// The seeded functions give the same values for the same chart and release,
// other values for another release, and values of the shape sprig's give.
func TestSeededFuncs(t *testing.T) {
	const tmpl = `{{ randAlphaNum 5 | lower }} {{ randAlpha 4 }} {{ randNumeric 3 }} {{ randAscii 6 | len }} {{ randBytes 9 }} {{ randInt 10 20 }} {{ uuidv4 }} {{ shuffle "abcdef" | len }}`
	render := func(seed ...string) string {
		t.Helper()
		var b bytes.Buffer
		if err := template.Must(template.New("t").Funcs(template.FuncMap{"lower": strings.ToLower, "len": func(s string) int { return len(s) }}).Funcs(seededFuncs(seed...)).Parse(tmpl)).Execute(&b, nil); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	a, b, other := render("podinfo", "6.14.1", "release-name", "default"), render("podinfo", "6.14.1", "release-name", "default"), render("podinfo", "6.14.1", "other", "default")
	if a != b {
		t.Errorf("same seed, two renders:\n%s\n%s", a, b)
	}
	if a == other {
		t.Errorf("another release got the same values: %s", a)
	}
	shape := regexp.MustCompile(`^[a-z0-9]{5} [a-zA-Z]{4} [0-9]{3} 6 [A-Za-z0-9+/]{12} 1[0-9] [0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12} 6$`)
	for _, s := range []string{a, other} {
		if !shape.MatchString(s) {
			t.Errorf("values not of sprig's shapes: %q", s)
		}
	}
}
