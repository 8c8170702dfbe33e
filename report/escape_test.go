package report

import (
	"math/rand"
	"strings"
	"testing"
	"testing/quick"
)

// unescapeCommand decodes a workflow-command value the way the Actions
// runner does, strictly: every '%' must start one of the known escapes.
func unescapeCommand(s string, property bool) (string, bool) {
	codes := map[string]string{"%25": "%", "%0D": "\r", "%0A": "\n"}
	if property {
		codes["%3A"] = ":"
		codes["%2C"] = ","
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			b.WriteByte(s[i])
			continue
		}
		if i+3 > len(s) {
			return "", false
		}
		r, ok := codes[s[i:i+3]]
		if !ok {
			return "", false
		}
		b.WriteString(r)
		i += 2
	}
	return b.String(), true
}

// checkEscapes states the properties of both escapers for one input.
func checkEscapes(t *testing.T, s string) {
	t.Helper()
	d := escapeData(s)
	if strings.ContainsAny(d, "\r\n") {
		t.Errorf("escapeData(%q) = %q keeps a line break", s, d)
	}
	if back, ok := unescapeCommand(d, false); !ok || back != s {
		t.Errorf("escapeData(%q) = %q does not decode back (got %q, %v)", s, d, back, ok)
	}
	p := escapeProperty(s)
	if strings.ContainsAny(p, "\r\n:,") {
		t.Errorf("escapeProperty(%q) = %q keeps a separator", s, p)
	}
	if back, ok := unescapeCommand(p, true); !ok || back != s {
		t.Errorf("escapeProperty(%q) = %q does not decode back (got %q, %v)", s, p, back, ok)
	}
	// Nothing else changes: with the special characters removed, all three agree.
	strip := strings.NewReplacer("%", "", "\r", "", "\n", "", ":", "", ",", "")
	if strip.Replace(s) != strip.Replace(dropEscapeCodes(d)) {
		t.Errorf("escapeData(%q) = %q changed ordinary characters", s, d)
	}
}

// dropEscapeCodes drops escape codes, leaving ordinary characters.
func dropEscapeCodes(s string) string {
	return strings.NewReplacer("%25", "", "%0D", "", "%0A", "", "%3A", "", "%2C", "").Replace(s)
}

func TestEscapeProperties(t *testing.T) {
	// Random strings biased towards the characters that matter.
	alphabet := []rune("%%%\r\n::,,aZ0=#<>&'\" 25ADC\u00e9\u2713")
	gen := func(r *rand.Rand) string {
		n := r.Intn(24)
		rs := make([]rune, n)
		for i := range rs {
			rs[i] = alphabet[r.Intn(len(alphabet))]
		}
		return string(rs)
	}
	cfg := &quick.Config{MaxCount: 5000, Rand: rand.New(rand.NewSource(1))}
	f := func(seed int64) bool {
		checkEscapes(t, gen(rand.New(rand.NewSource(seed))))
		return !t.Failed()
	}
	if err := quick.Check(f, cfg); err != nil {
		t.Error(err)
	}
	// Arbitrary strings, too (testing/quick's own generator).
	if err := quick.Check(func(s string) bool { checkEscapes(t, s); return !t.Failed() }, cfg); err != nil {
		t.Error(err)
	}
}

func FuzzGitHubEscape(f *testing.F) {
	for _, s := range []string{"", "%", "%25", "a\r\nb", "k: v, w", "%0A%3A%2C", "::error file=x::y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { checkEscapes(t, s) })
}
