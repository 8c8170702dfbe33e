package manifest

import (
	"fmt"
	"testing"
)

// TestRenderedObjectLetsContentGo: a rendered object is decoded when made
// (a bad document is an error there), then holds no content until read;
// read, its content and its reading notes are what the first decode gave.
func TestRenderedObjectLetsContentGo(t *testing.T) {
	src := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\ndata: {on: yes, n: 010}\n"
	parsed, errs := ParseRendered("t.yaml", []byte(src))
	if len(errs) > 0 || len(parsed) != 1 {
		t.Fatal(errs)
	}
	want, err := parsed[0].Content()
	if err != nil {
		t.Fatal(err)
	}
	wantNotes := fmt.Sprint(parsed[0].Notes())
	o, err := NewRenderedObject("t.yaml", "unit", 0, parsed[0].Node())
	if err != nil {
		t.Fatal(err)
	}
	if o.content != nil {
		t.Errorf("a rendered object holds its content before anything reads it")
	}
	if got := fmt.Sprint(o.Notes()); got != wantNotes || wantNotes == "[]" {
		t.Errorf("notes before reading: %s, want %s", got, wantNotes)
	}
	got, err := o.Content()
	if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("content: %v (%v), want %v", got, err, want)
	}
	if got := fmt.Sprint(o.Notes()); got != wantNotes {
		t.Errorf("notes after reading: %s, want %s", got, wantNotes)
	}
}
