package baseline

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules"
)

func TestNormalize(t *testing.T) {
	tests := []struct{ in, want string }{
		{`Pod "pvpod" is defined twice: here and at a/b.yaml:12:3 (they differ)`, `Pod "pvpod" is defined twice: here and at a/b.yaml (they differ)`},
		{`duplicate key "image" (first at line 6): kubectl keeps the last`, `duplicate key "image" (first at line N): kubectl keeps the last`},
		{`this file defines 34 objects that x.yaml also defines, Service "a" first (at x.yaml:31175:1)`, `this file defines N objects that x.yaml also defines, Service "a" first (at x.yaml)`},
		{`this Deployment and 41 more are not judged`, `this Deployment and N more are not judged`},
		{`lines 3-9 repeat`, `lines N repeat`},
		// What a finding is about stays: ports, versions, indexes.
		{`container "mongo" uses hostPort 27017`, `container "mongo" uses hostPort 27017`},
		{`removed in Kubernetes 1.25 (deprecated in 1.21)`, `removed in Kubernetes 1.25 (deprecated in 1.21)`},
	}
	for _, tt := range tests {
		if got := Normalize(tt.in); got != tt.want {
			t.Errorf("Normalize(%q)\n got %q\nwant %q", tt.in, got, tt.want)
		}
	}
}

var (
	web  = manifest.Ref{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "shop", Name: "web"}
	node = manifest.Ref{APIVersion: "v1", Kind: "Node", Name: "n1"}
)

func finding(rule string, obj manifest.Ref, file string, line int, field, msg string) rules.Finding {
	return rules.Finding{Rule: rule, Severity: rules.Error, Object: obj, Pos: manifest.Position{File: file, Line: line, Column: 3}, Field: field, Message: msg}
}

func TestKeyer(t *testing.T) {
	plain := func(f string) bool { return f == "deploy/web.yaml" }
	k := Keyer{Root: "/tmp/rev", Plain: plain}
	tests := []struct {
		name string
		f    rules.Finding
		want Key
	}{
		{"a plain manifest's object: its identity, wherever it is",
			finding("psa/privileged", web, "deploy/web.yaml", 14, "spec.x", "m"),
			Key{Rule: "psa/privileged", Object: web, Field: "spec.x", Message: "m"}},
		{"a rendered object: its template too",
			finding("psa/privileged", web, "/tmp/rev/charts/shop/templates/web.yaml", 14, "spec.x", "m"),
			Key{Rule: "psa/privileged", Object: web, Source: "charts/shop/templates/web.yaml", Field: "spec.x", Message: "m"}},
		{"no object: its file",
			finding("kiln/unused-ignore", manifest.Ref{}, "deploy/web.yaml", 3, "", "m"),
			Key{Rule: "kiln/unused-ignore", Source: "deploy/web.yaml", Message: "m"}},
		{"files the message names under the root, positions out",
			finding("object/duplicate", node, "deploy/web.yaml", 3, "", "and at /tmp/rev/deploy/other.yaml:4:1"),
			Key{Rule: "object/duplicate", Object: node, Message: "and at deploy/other.yaml"}},
	}
	for _, tt := range tests {
		if got := k.Of(tt.f); got != tt.want {
			t.Errorf("%s:\n got %+v\nwant %+v", tt.name, got, tt.want)
		}
	}
}

func TestEncodeSortedDeterministicRoundTrip(t *testing.T) {
	k := Keyer{Plain: func(string) bool { return true }}
	b := New()
	// Added out of order, one key twice.
	b.Add(k.Of(finding("psa/runAsNonRoot", web, "a.yaml", 9, "spec.b", "second")))
	b.Add(k.Of(finding("api/removed", node, "b.yaml", 1, "apiVersion", `"quoted" <html> & more`)))
	b.Add(k.Of(finding("psa/runAsNonRoot", web, "a.yaml", 30, "spec.b", "second")))
	var out bytes.Buffer
	if err := b.Encode(&out); err != nil {
		t.Fatal(err)
	}
	want := `{"kiln":"baseline","version":1}
{"rule":"api/removed","object":"v1 Node n1","field":"apiVersion","message":"\"quoted\" <html> & more"}
{"rule":"psa/runAsNonRoot","object":"apps/v1 Deployment shop/web","field":"spec.b","message":"second","count":2}
`
	if out.String() != want {
		t.Fatalf("Encode:\n%s\nwant:\n%s", out.String(), want)
	}
	back, err := Decode("b.jsonl", out.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	var again bytes.Buffer
	back.Encode(&again)
	if again.String() != want {
		t.Errorf("Decode then Encode:\n%s\nwant:\n%s", again.String(), want)
	}
	if back.Len() != 3 {
		t.Errorf("Len %d, want 3", back.Len())
	}
}

func TestDecodeErrors(t *testing.T) {
	const head = `{"kiln":"baseline","version":1}` + "\n"
	const ok = `{"rule":"a/b","message":"m"}` + "\n"
	tests := []struct {
		name, data string
		line       int
		want       string
	}{
		{"empty", "", 1, "empty baseline"},
		{"no header", ok, 1, "not a kiln baseline"},
		{"newer version", `{"kiln":"baseline","version":2}` + "\n", 1, "baseline version 2"},
		{"broken JSON", head + ok + `{"rule":"a/b",` + "\n", 3, "not a baseline entry"},
		{"unknown key", head + `{"rule":"a/b","line":3}` + "\n", 2, `unknown key "line"`},
		{"wrong type", head + `{"rule":"a/b","count":"2"}` + "\n", 2, "wrong type"},
		{"no rule", head + `{"message":"m"}` + "\n", 2, "no rule"},
		{"bad object", head + `{"rule":"a/b","object":"Deployment web"}` + "\n", 2, `object "Deployment web"`},
		{"repeat", head + ok + ok, 3, "repeats an earlier one"},
		{"two values", head + ok[:len(ok)-1] + ok, 2, "more than one JSON value"},
	}
	for _, tt := range tests {
		_, err := Decode("base.jsonl", []byte(tt.data))
		var me *manifest.Error
		if !errors.As(err, &me) {
			t.Errorf("%s: error %v, want a *manifest.Error", tt.name, err)
			continue
		}
		if me.Pos.File != "base.jsonl" || me.Pos.Line != tt.line || !strings.Contains(me.Msg, tt.want) {
			t.Errorf("%s: %v, want base.jsonl:%d: ...%s...", tt.name, err, tt.line, tt.want)
		}
	}
}

func TestMatcherCountsCopies(t *testing.T) {
	k := Keyer{Plain: func(string) bool { return true }}
	a := finding("psa/privileged", web, "a.yaml", 10, "spec.x", "m")
	a2 := finding("psa/privileged", web, "a.yaml", 20, "spec.x", "m") // the same key, elsewhere
	gone := finding("psa/hostPort", web, "a.yaml", 30, "spec.y", "m")
	b := New()
	b.Add(k.Of(a))
	b.Add(k.Of(gone))
	b.Add(k.Of(gone))
	m := b.Matcher(k)
	for range 2 { // every reading starts afresh
		known := m.Known()
		if !known(a) {
			t.Error("the first copy is in the baseline")
		}
		if known(a2) {
			t.Error("the second copy is new: the baseline holds one")
		}
		if got := m.Fixed(); got != 2 {
			t.Errorf("Fixed %d, want 2 (both copies of the gone finding)", got)
		}
	}
	m.Only(func(k Key) bool { return k.Field == "spec.x" })
	m.Known()(a)
	if got := m.Fixed(); got != 0 {
		t.Errorf("Fixed %d with only spec.x's entries, want 0", got)
	}
}

func TestUnion(t *testing.T) {
	k1 := Key{Rule: "a/b", Message: "m"}
	k2 := Key{Rule: "a/c", Message: "m"}
	a, b := New(), New()
	a.Add(k1)
	b.Add(k1)
	b.Add(k1)
	b.Add(k2)
	a.Union(b)
	if a.counts[k1] != 2 || a.counts[k2] != 1 {
		t.Errorf("Union: %v, want the larger count of each key", a.counts)
	}
}
