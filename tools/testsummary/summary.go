package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
)

// event is one line of `go test -json` (cmd/test2json's TestEvent).
type event struct {
	Action     string
	Package    string
	ImportPath string
	Test       string
	Output     string
}

// Skip is one skipped test and the reason it gave.
type Skip struct {
	Package, Test, Reason string
}

// Summary counts what a run did.
type Summary struct {
	Passed, Failed, Skipped int
	// BuildFailed counts packages that did not build; PackagesFailed those
	// that failed with no failed test (a crash in TestMain, a timeout).
	BuildFailed, PackagesFailed int
	// Unfinished counts packages whose tests started but never ended (the
	// test binary was killed).
	Unfinished int
	Skips      []Skip
}

// OK reports whether nothing failed.
func (s *Summary) OK() bool {
	return s.Failed == 0 && s.BuildFailed == 0 && s.PackagesFailed == 0 && s.Unfinished == 0
}

type testKey struct{ pkg, test string }

// Summarize reads the events of in and writes the run's output to out as
// `go test` would without -v, then the skipped tests and the counts.
func Summarize(in io.Reader, out io.Writer) (*Summary, error) {
	s := &Summary{}
	held := map[testKey][]string{} // a test's output, printed only if it fails
	started := map[string]bool{}
	failedIn := map[string]int{}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if err := json.Unmarshal(line, &e); err != nil || e.Action == "" {
			fmt.Fprintln(out, string(line)) // not an event: say it as it came
			continue
		}
		switch e.Action {
		case "build-output":
			fmt.Fprint(out, e.Output)
			continue
		case "build-fail":
			s.BuildFailed++
			continue
		case "start":
			started[e.Package] = true
			continue
		}
		if e.Test == "" {
			switch e.Action {
			case "output":
				if o := strings.TrimRight(e.Output, "\n"); o != "PASS" && !strings.HasPrefix(o, "=== ") {
					fmt.Fprint(out, e.Output)
				}
			case "fail":
				// A package that fails with no failed test (a crash in
				// TestMain, a timeout, a bad flag) is a failure of its own.
				if failedIn[e.Package] == 0 {
					s.PackagesFailed++
				}
				delete(started, e.Package)
			case "pass", "skip":
				delete(started, e.Package)
			}
			continue
		}
		k := testKey{e.Package, e.Test}
		switch e.Action {
		case "output":
			held[k] = append(held[k], e.Output)
		case "pass":
			s.Passed++
			delete(held, k)
		case "fail":
			s.Failed++
			failedIn[e.Package]++
			for _, o := range held[k] {
				if !strings.HasPrefix(o, "=== ") {
					fmt.Fprint(out, o)
				}
			}
			delete(held, k)
		case "skip":
			s.Skipped++
			s.Skips = append(s.Skips, Skip{Package: e.Package, Test: e.Test, Reason: reason(held[k])})
			delete(held, k)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	s.Unfinished = len(started)
	for pkg := range started {
		fmt.Fprintf(out, "%s: its tests never finished\n", pkg)
	}
	s.write(out)
	return s, nil
}

// reason is what a skipped test said, without go test's headers.
func reason(lines []string) string {
	var parts []string
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- SKIP") {
			continue
		}
		parts = append(parts, t)
	}
	if len(parts) == 0 {
		return "(no reason given)"
	}
	return strings.Join(parts, " ")
}

// write prints the skipped tests, how to run them, and the counts.
func (s *Summary) write(out io.Writer) {
	if len(s.Skips) > 0 {
		sort.Slice(s.Skips, func(i, j int) bool {
			a, b := s.Skips[i], s.Skips[j]
			if a.Package != b.Package {
				return a.Package < b.Package
			}
			return a.Test < b.Test
		})
		fmt.Fprintf(out, "\nNot tested here (%d skipped):\n", len(s.Skips))
		for _, sk := range s.Skips {
			fmt.Fprintf(out, "  %s %s: %s\n", sk.Package, sk.Test, sk.Reason)
		}
		fmt.Fprintln(out, "To run them: bash .ci/run (it installs kustomize, the Flux CLI, helm, pre-commit, podman, runc and chromium, builds the conformance servers, and sets CI=true so that a missing tool fails instead of skipping).")
	}
	if n := s.BuildFailed + s.PackagesFailed + s.Unfinished; n > 0 {
		fmt.Fprintf(out, "%d packages failed outside their tests (did not build, crashed or timed out)\n", n)
	}
	fmt.Fprintf(out, "%d passed, %d failed, %d skipped\n", s.Passed, s.Failed+s.BuildFailed+s.PackagesFailed+s.Unfinished, s.Skipped)
}
