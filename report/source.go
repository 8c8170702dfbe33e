package report

import (
	"bytes"
	"errors"
	"github.com/kilnhq/kiln/internal/plural"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/kilnhq/kiln/manifest"
)

// Bounds of the source lines a report shows.
const (
	sourceContext  = 2       // lines shown before and after a finding's line
	sourceMaxLine  = 200     // characters of one line shown, then "…"
	sourceMaxFile  = 8 << 20 // bytes of a file read for its lines
	sourceMaxTotal = 8 << 20 // bytes of source lines in one report
)

// excerpt is a few lines of a file around a position, or why there are none.
type excerpt struct {
	Lines []sourceLine
	// Note says why the lines are not shown ("" when they are).
	Note string
}

// sourceLine is one line of an excerpt.
type sourceLine struct {
	N    int
	Text string
	// Hit marks the line the finding points at.
	Hit bool
}

// sourceReader reads excerpts of the files findings point at, keeping the
// last file read (a run's findings come file by file), within
// sourceMaxTotal bytes for the whole report.
type sourceReader struct {
	open  func(name string) (io.ReadCloser, error)
	file  string   // the file of lines or failed
	lines []string // its lines
	fail  string   // why it cannot be shown ("" when lines are read)
	spent int      // bytes of lines shown so far
}

func newSourceReader(open func(string) (io.ReadCloser, error)) *sourceReader {
	if open == nil {
		open = func(name string) (io.ReadCloser, error) { return os.Open(name) }
	}
	return &sourceReader{open: open}
}

// excerpt returns the lines around p, or a note saying why they cannot be
// shown. A position without a file or a line has no excerpt and no note.
func (s *sourceReader) excerpt(p manifest.Position) excerpt {
	if p.File == "" || p.Line <= 0 {
		return excerpt{}
	}
	if p.File == "<stdin>" {
		return excerpt{Note: "source not shown: it was read from standard input"}
	}
	if p.File != s.file {
		s.file = p.File
		s.lines, s.fail = readLines(s.open, p.File)
	}
	if s.fail != "" {
		return excerpt{Note: "source not shown: " + s.fail}
	}
	if p.Line > len(s.lines) {
		return excerpt{Note: "source not shown: line " + strconv.Itoa(p.Line) + " is past the end of " + p.File + " (" + plural.Count(len(s.lines), "line") + ")"}
	}
	if s.spent >= sourceMaxTotal {
		return excerpt{Note: "source not shown: this report already holds its limit of source lines (" + strconv.Itoa(sourceMaxTotal>>20) + " MiB)"}
	}
	var ex excerpt
	for n := max(1, p.Line-sourceContext); n <= min(len(s.lines), p.Line+sourceContext); n++ {
		text := s.lines[n-1]
		if utf8.RuneCountInString(text) > sourceMaxLine {
			text = string([]rune(text)[:sourceMaxLine-1]) + "…"
		}
		s.spent += len(text)
		ex.Lines = append(ex.Lines, sourceLine{N: n, Text: text, Hit: n == p.Line})
	}
	return ex
}

// readLines reads a file's lines (without their line breaks), or says in
// plain words why it cannot.
func readLines(open func(string) (io.ReadCloser, error), name string) ([]string, string) {
	f, err := open(name)
	if err != nil {
		return nil, "cannot read " + name + ": " + readProblem(err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, sourceMaxFile+1))
	switch {
	case err != nil:
		return nil, "cannot read " + name + ": " + readProblem(err)
	case len(b) > sourceMaxFile:
		return nil, name + " is larger than " + strconv.Itoa(sourceMaxFile>>20) + " MiB"
	case bytes.IndexByte(b, 0) >= 0:
		return nil, name + " is not a text file"
	}
	text := strings.ToValidUTF8(string(b), "\uFFFD")
	text = strings.TrimSuffix(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	if text == "" {
		return nil, ""
	}
	return strings.Split(text, "\n"), ""
}

// readProblem says what went wrong reading a file, without the path
// (the caller names it).
func readProblem(err error) string {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "it does not exist (moved or deleted since the run?)"
	case errors.Is(err, fs.ErrPermission):
		return "permission denied"
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
