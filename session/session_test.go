package session

import (
	"testing"

	"github.com/kilnhq/kiln/rules"
	"github.com/kilnhq/kiln/session/settings"
)

func TestFailsAt(t *testing.T) {
	tests := []struct {
		failOn                  string
		errors, warnings, infos int
		want                    bool
	}{
		{"", 1, 0, 0, true},
		{"error", 0, 3, 2, false},
		{"error", 1, 0, 0, true},
		{"warning", 0, 1, 0, true},
		{"warning", 1, 0, 0, true},
		{"warning", 0, 0, 5, false},
		{"never", 9, 9, 9, false},
	}
	for _, tt := range tests {
		threshold, err := settings.ParseFailOn(tt.failOn)
		if err != nil {
			t.Fatalf("settings.ParseFailOn(%q): %v", tt.failOn, err)
		}
		res := &rules.Result{Summary: rules.Summary{Errors: tt.errors, Warnings: tt.warnings, Infos: tt.infos}}
		if got := FailsAt(res, threshold); got != tt.want {
			t.Errorf("fail-on %q with %d/%d/%d: %v, want %v", tt.failOn, tt.errors, tt.warnings, tt.infos, got, tt.want)
		}
	}
	for _, bad := range []string{"info", "Error", "always", "0"} {
		if _, err := settings.ParseFailOn(bad); err == nil {
			t.Errorf("settings.ParseFailOn(%q) accepted", bad)
		}
	}
}
