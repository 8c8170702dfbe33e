package report

import (
	"io"
	"os"

	"github.com/mattn/go-isatty"
	"golang.org/x/term"
)

// UseColor decides whether the text written to w is coloured: only on a
// terminal, and neither with noColor (--no-color), a non-empty NO_COLOR
// (no-color.org) nor TERM=dumb.
func UseColor(w io.Writer, noColor bool) bool {
	if !colorAllowed(noColor, os.Getenv) {
		return false
	}
	f, ok := w.(*os.File)
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}

// TerminalWidth is the width of the terminal w is, for wrapping long
// findings; 0 (no wrapping) when w is not a terminal.
func TerminalWidth(w io.Writer) int {
	f, ok := w.(*os.File)
	if !ok || !isatty.IsTerminal(f.Fd()) {
		return 0
	}
	width, _, err := term.GetSize(int(f.Fd()))
	if err != nil || width < 40 {
		return 0
	}
	return width
}

// colorAllowed is UseColor's decision before the terminal check. An empty
// NO_COLOR does not count (no-color.org); TERM=dumb is a terminal without
// escape sequences (Emacs shells, some CI logs).
func colorAllowed(noColor bool, getenv func(string) string) bool {
	return !noColor && getenv("NO_COLOR") == "" && getenv("TERM") != "dumb"
}
