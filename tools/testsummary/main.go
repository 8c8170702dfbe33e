// Command testsummary reads `go test -json` on standard input and prints what
// `go test` prints without -v (each package's ok or FAIL line, the output of
// failed tests, build errors), then every skipped test with the reason it
// gave, and a closing count. It exits 1 when a test or a build failed, or the
// stream ended before every package it started finished. make test uses it,
// so that a run says what it did not test.
package main

import (
	"fmt"
	"os"
)

func main() {
	s, err := Summarize(os.Stdin, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testsummary:", err)
		os.Exit(1)
	}
	if !s.OK() {
		os.Exit(1)
	}
}
