package fix

import (
	"strings"

	"github.com/pmezard/go-difflib/difflib"
)

// UnifiedDiff returns a unified diff (3 lines of context) from a to b, with
// the file named a/PATH and b/PATH as git does; "" when they are equal.
func UnifiedDiff(path string, a, b []byte) string {
	if string(a) == string(b) {
		return ""
	}
	text, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A:        splitLines(string(a)),
		B:        splitLines(string(b)),
		FromFile: "a/" + strings.TrimPrefix(path, "/"),
		ToFile:   "b/" + strings.TrimPrefix(path, "/"),
		Context:  3,
	})
	if err != nil {
		return ""
	}
	return text
}

// splitLines splits text into lines that keep their newline; a last line
// without one is marked as diff(1) does.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	} else {
		lines[len(lines)-1] += "\n\\ No newline at end of file\n"
	}
	return lines
}
