package manifest

import (
	"fmt"
	"strings"
	"testing"
)

// TestJSONStream: concatenated JSON values are objects as kubectl reads
// them, with each field's position in the file.
func TestJSONStream(t *testing.T) {
	tests := []struct {
		name, in string
		// want are "name field line:col" for each object.
		want []string
		err  string
	}{
		{"same line", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}}{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"b"}}`,
			[]string{"a metadata.name 1:51", "b metadata.name 1:113"}, ""},
		{"one per line", "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"a\"}}\n  {\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"b\"}}\n",
			[]string{"a metadata.name 1:51", "b metadata.name 2:53"}, ""},
		{"pretty", "{\n  \"apiVersion\": \"v1\",\n  \"kind\": \"ConfigMap\",\n  \"metadata\": {\"name\": \"a\"}\n}\n{\n  \"apiVersion\": \"v1\",\n  \"kind\": \"ConfigMap\",\n  \"metadata\": {\n    \"name\": \"b\"\n  }\n}\n",
			[]string{"a metadata.name 4:16", "b metadata.name 10:5"}, ""},
		{"list item", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}} {"apiVersion":"v1","kind":"List","items":[null,{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"b"}}]}`,
			[]string{"a metadata.name 1:51"}, ""},
		{"unfinished second", "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"a\"}}\n{\"apiVersion\": \"v1\"\n",
			[]string{"a metadata.name 1:51"}, "f.json:2:1: invalid JSON: the value that starts here does not end"},
		{"YAML documents of JSON", "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"a\"}}\n---\n{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"b\"}}\n",
			[]string{"a metadata.name 1:51", "b metadata.name 3:51"}, ""},
		{"syntax error", "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"a\"}}\n{\"apiVersion\" \"v1\"}\n",
			[]string{"a metadata.name 1:51"}, "f.json:2:15: invalid JSON: invalid character"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs, errs := Parse("f.json", []byte(tt.in))
			var got []string
			for _, o := range objs {
				if o.Kind == "ConfigMap" {
					p := o.Locate("metadata.name")
					got = append(got, fmt.Sprintf("%s metadata.name %d:%d", o.Name, p.Line, p.Column))
				}
			}
			if tt.name == "list item" && len(objs) != 2 {
				t.Errorf("%d objects, want the ConfigMap and the List's item", len(objs))
			}
			if tt.name != "list item" && strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Errorf("got %v, want %v", got, tt.want)
			}
			var msgs []string
			for _, e := range errs {
				msgs = append(msgs, e.Error())
			}
			if tt.err == "" && len(errs) > 0 || tt.err != "" && (len(errs) != 1 || !strings.HasPrefix(msgs[0], tt.err)) {
				t.Errorf("errors %q, want %q", msgs, tt.err)
			}
		})
	}
}

// FuzzJSONStream: any input starting like JSON is read without a panic,
// and every position is inside the input.
func FuzzJSONStream(f *testing.F) {
	f.Add([]byte(`{"a":1}{"b":[1,2]}`))
	f.Add([]byte("{\"kind\":\"X\"}\n{"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if !isJSONStream(data) {
			return
		}
		objs, _ := Parse("f.json", data)
		lines := strings.Count(string(data), "\n") + 1
		for _, o := range objs {
			if p := o.Pos(); p.Line < 1 || p.Line > lines {
				t.Fatalf("position %v outside %d lines", p, lines)
			}
		}
	})
}
