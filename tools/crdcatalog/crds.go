package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// crdsOf returns the v1 CustomResourceDefinitions among the YAML files'
// documents (of the groups, when given), without descriptions, sorted by
// name. Two CRDs of one name are an error.
func crdsOf(files [][]byte, groups []string) ([]map[string]any, error) {
	keep := map[string]bool{}
	for _, g := range groups {
		keep[g] = true
	}
	byName := map[string]map[string]any{}
	for _, data := range files {
		r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
		for {
			doc, err := r.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return nil, err
			}
			j, err := yaml.YAMLToJSON(doc)
			if err != nil {
				return nil, err
			}
			var c map[string]any
			dec := json.NewDecoder(bytes.NewReader(j))
			dec.UseNumber()
			if err := dec.Decode(&c); err != nil || c == nil {
				continue // a comment-only document
			}
			if c["apiVersion"] != "apiextensions.k8s.io/v1" || c["kind"] != "CustomResourceDefinition" {
				continue
			}
			if len(keep) > 0 && !keep[str(c, "spec", "group")] {
				continue
			}
			name := str(c, "metadata", "name")
			if _, dup := byName[name]; dup {
				return nil, fmt.Errorf("CustomResourceDefinition %s is there twice", name)
			}
			byName[name] = clean(c)
		}
	}
	out := make([]map[string]any, 0, len(byName))
	for _, n := range sortedKeys(byName) {
		out = append(out, byName[n])
	}
	return out, nil
}

// clean drops from a CRD what only documents it or what the server sets:
// the schemas' descriptions, status and metadata.creationTimestamp. What
// the server judges a custom resource by (types, formats, defaults,
// enums, patterns, CEL rules, list and map types, preserve-unknown-fields)
// stays as published.
func clean(c map[string]any) map[string]any {
	delete(c, "status")
	if md, ok := c["metadata"].(map[string]any); ok {
		delete(md, "creationTimestamp")
	}
	spec, _ := c["spec"].(map[string]any)
	versions, _ := spec["versions"].([]any)
	for _, v := range versions {
		vm, _ := v.(map[string]any)
		sch, _ := vm["schema"].(map[string]any)
		if s, ok := sch["openAPIV3Schema"].(map[string]any); ok {
			undocument(s)
		}
	}
	return c
}

// undocument removes description from a JSON schema and every schema it
// holds (a property named description stays: property names are keys of
// properties, not schema fields).
func undocument(s map[string]any) {
	delete(s, "description")
	for _, k := range []string{"properties", "patternProperties", "definitions", "dependencies"} {
		if m, ok := s[k].(map[string]any); ok {
			for _, v := range m {
				if sub, ok := v.(map[string]any); ok {
					undocument(sub)
				}
			}
		}
	}
	for _, k := range []string{"items", "additionalProperties", "additionalItems", "not"} {
		switch v := s[k].(type) {
		case map[string]any:
			undocument(v)
		case []any:
			schemas(v)
		}
	}
	for _, k := range []string{"allOf", "anyOf", "oneOf"} {
		if l, ok := s[k].([]any); ok {
			schemas(l)
		}
	}
}

func schemas(l []any) {
	for _, v := range l {
		if sub, ok := v.(map[string]any); ok {
			undocument(sub)
		}
	}
}

// served lists the versions a CRD serves, in its order.
func served(c map[string]any) []string {
	spec, _ := c["spec"].(map[string]any)
	versions, _ := spec["versions"].([]any)
	var out []string
	for _, v := range versions {
		vm, _ := v.(map[string]any)
		if vm["served"] == true {
			name, _ := vm["name"].(string)
			out = append(out, name)
		}
	}
	return out
}

// gz is the CRDs as a JSON array, gzip-compressed with no name or time in
// its header, so equal CRDs give equal bytes.
func gz(crds []map[string]any) ([]byte, error) {
	sort.SliceStable(crds, func(i, j int) bool { return str(crds[i], "metadata", "name") < str(crds[j], "metadata", "name") })
	var raw bytes.Buffer
	enc := json.NewEncoder(&raw)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(crds); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	w, err := gzip.NewWriterLevel(&b, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	if _, err := w.Write(raw.Bytes()); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// str is the string at a path of nested mappings ("" if absent).
func str(m map[string]any, keys ...string) string {
	var v any = m
	for _, k := range keys {
		mm, ok := v.(map[string]any)
		if !ok {
			return ""
		}
		v = mm[k]
	}
	s, _ := v.(string)
	return s
}

// untemplate evaluates the line-level actions of a Helm template that
// wraps CRD files ({{- if X }}, {{- with X }}, {{- end }}) with the
// conditions given (each X written as in the file), drops the lines of
// false branches, and drops an active "key: {{ ... }}" line (an
// annotation filled from values). Any other action is an error: the
// source then needs a condition or a real render.
func untemplate(data []byte, conds map[string]bool) ([]byte, error) {
	var out bytes.Buffer
	var stack []bool
	active := func() bool {
		for _, c := range stack {
			if !c {
				return false
			}
		}
		return true
	}
	for i, line := range strings.SplitAfter(string(data), "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "{{") && strings.HasSuffix(t, "}}") && strings.Count(t, "{{") == 1 {
			action := strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(t, "{{"), "-"), "}}"))
			action = strings.TrimSpace(strings.TrimSuffix(action, "-"))
			switch {
			case action == "end":
				if len(stack) == 0 {
					return nil, fmt.Errorf("line %d: {{ end }} without an action", i+1)
				}
				stack = stack[:len(stack)-1]
				continue
			case strings.HasPrefix(action, "if ") || strings.HasPrefix(action, "with "):
				_, x, _ := strings.Cut(action, " ")
				c, ok := conds[strings.TrimSpace(x)]
				if !ok && active() {
					return nil, fmt.Errorf("line %d: no condition given for %q", i+1, strings.TrimSpace(x))
				}
				stack = append(stack, c)
				continue
			}
		}
		if !active() {
			continue
		}
		if strings.Contains(line, "{{") {
			if key, _, ok := strings.Cut(t, ": {{"); ok && !strings.HasPrefix(key, "-") && !strings.Contains(key, " ") && strings.HasSuffix(t, "}}") {
				continue
			}
			return nil, fmt.Errorf("line %d: a template action kiln does not evaluate: %s", i+1, t)
		}
		out.WriteString(line)
	}
	if len(stack) != 0 {
		return nil, fmt.Errorf("%d template actions not ended", len(stack))
	}
	return out.Bytes(), nil
}
