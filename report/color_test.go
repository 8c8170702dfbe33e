package report

import "testing"

func TestColorAllowed(t *testing.T) {
	tests := []struct {
		name    string
		noColor bool
		env     map[string]string
		want    bool
	}{
		{name: "nothing set", want: true},
		{name: "an ordinary terminal", env: map[string]string{"TERM": "xterm-256color"}, want: true},
		{name: "NO_COLOR=1", env: map[string]string{"NO_COLOR": "1"}, want: false},
		{name: "NO_COLOR with any value", env: map[string]string{"NO_COLOR": "false"}, want: false},
		{name: "empty NO_COLOR does not count", env: map[string]string{"NO_COLOR": ""}, want: true},
		{name: "TERM=dumb", env: map[string]string{"TERM": "dumb"}, want: false},
		{name: "--no-color", noColor: true, env: map[string]string{"TERM": "xterm"}, want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			getenv := func(k string) string { return tt.env[k] }
			if got := colorAllowed(tt.noColor, getenv); got != tt.want {
				t.Errorf("colorAllowed(%v, %v) = %v, want %v", tt.noColor, tt.env, got, tt.want)
			}
		})
	}
}
