package discover

import (
	"fmt"
	"log"
	"os"
	"strings"
	"testing"
)

// TestCaptureOutput: what kustomize prints on os.Stderr and Helm through
// the log package is caught, each line once, and both are restored after.
func TestCaptureOutput(t *testing.T) {
	stderr, logOut := os.Stderr, log.Writer()
	done := captureOutput()
	fmt.Fprintln(os.Stderr, "# Warning: 'commonLabels' is deprecated.")
	fmt.Fprintln(os.Stderr, "# Warning: 'commonLabels' is deprecated.")
	log.Printf("found symbolic link in path: a resolves to b. Contents of linked file included and used")
	lines := done()
	want := []string{"Warning: 'commonLabels' is deprecated.", "found symbolic link in path: a resolves to b. Contents of linked file included and used"}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("lines = %q, want %q", lines, want)
	}
	if os.Stderr != stderr || log.Writer() != logOut {
		t.Errorf("os.Stderr or the log's writer not restored")
	}
}
