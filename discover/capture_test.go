package discover

import (
	"fmt"
	"log"
	"log/slog"
	"os"
	"strings"
	"testing"
)

// TestCaptureOutput: what kustomize prints on os.Stderr and Helm through
// the log package (slog's default handler writes there) is caught, each line once, and both are restored after.
func TestCaptureOutput(t *testing.T) {
	stderr, logOut := os.Stderr, log.Writer()
	done := captureOutput()
	fmt.Fprintln(os.Stderr, "# Warning: 'commonLabels' is deprecated.")
	fmt.Fprintln(os.Stderr, "# Warning: 'commonLabels' is deprecated.")
	slog.Info("found symbolic link in path. Contents of linked file included and used", "path", "a", "resolved", "b c")
	log.Printf("coalesce.go:286: warning: skipped value")
	lines := done()
	want := []string{"Warning: 'commonLabels' is deprecated.", `INFO found symbolic link in path. Contents of linked file included and used path=a resolved="b c"`, "coalesce.go:286: warning: skipped value"}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("lines = %q, want %q", lines, want)
	}
	if os.Stderr != stderr || log.Writer() != logOut {
		t.Errorf("os.Stderr or the log's writer not restored")
	}
}

// TestHelmNotes: Helm 4's slog lines become kiln's warnings, the symbolic
// link's with its quoted attributes read back.
func TestHelmNotes(t *testing.T) {
	tests := []struct{ line, want string }{
		{`INFO found symbolic link in path. Contents of linked file included and used path=/c/t/x.yaml resolved="/c/s p/x.yaml"`,
			"/c/t/x.yaml: warning: Helm follows this symbolic link to /c/s p/x.yaml and reads the file there into the chart"},
		{`WARN missing required value message="x is required"`, `c/Chart.yaml:1:1: warning: Helm: missing required value message="x is required"`},
		{`coalesce.go:286: warning: skipped value`, `c/Chart.yaml:1:1: warning: Helm: coalesce.go:286: warning: skipped value`},
	}
	for _, tt := range tests {
		got := helmNotes("c", []string{tt.line})
		if len(got) != 1 || got[0].Error() != tt.want {
			t.Errorf("helmNotes(%q) = %v, want %q", tt.line, got, tt.want)
		}
	}
}
