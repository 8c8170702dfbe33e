package session

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/kilnhq/kiln/manifest"
)

func TestExitCode(t *testing.T) {
	at := func(file string, line int, msg string) error {
		return &manifest.Error{Pos: manifest.Position{File: file, Line: line, Column: 1}, Msg: msg}
	}
	tests := []struct {
		name   string
		err    error
		code   int
		stderr string
	}{
		{"success", nil, 0, ""},
		{"findings", ErrFindings, ExitFindings, ""},
		{"findings wrapped", fmt.Errorf("lint: %w", ErrFindings), ExitFindings, ""},
		{"reported", ErrReported, ExitInput, ""},
		{"refused", &Refused{Msg: "build refused"}, ExitFindings, "kiln: build refused\n"},
		{"input errors sorted", InputErrors{at("b.yaml", 1, "bad"), at("a.yaml", 2, "worse")}, ExitInput, "a.yaml:2:1: worse\nb.yaml:1:1: bad\n"},
		{"other", errors.New("unknown flag: --nosuch"), ExitInput, "kiln: unknown flag: --nosuch\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var w bytes.Buffer
			if code := ExitCode(tt.err, &w); code != tt.code || w.String() != tt.stderr {
				t.Errorf("ExitCode(%v) = %d, %q; want %d, %q", tt.err, code, w.String(), tt.code, tt.stderr)
			}
		})
	}
}
