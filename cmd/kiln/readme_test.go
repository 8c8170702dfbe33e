package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// TestReadmeFirstRun: the output the README's first screen shows is what
// kiln prints for that command, byte for byte.
func TestReadmeFirstRun(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	const prompt = "```console\n$ kiln "
	i := strings.Index(string(readme), prompt)
	if i < 0 {
		t.Fatal("README.md shows no console session (```console, $ kiln …)")
	}
	block := string(readme[i+len("```console\n$ "):])
	block = block[:strings.Index(block, "```")]
	cmdline, want, _ := strings.Cut(block, "\n")
	t.Chdir("../..")
	var stdout, stderr bytes.Buffer
	code := run(strings.Fields(cmdline)[1:], strings.NewReader(""), &stdout, &stderr)
	if code != 1 {
		t.Errorf("%s: exit %d, the README's example shows findings (exit 1); stderr: %s", cmdline, code, stderr.String())
	}
	if got := stdout.String(); got != want {
		t.Errorf("%s prints something else than README.md shows: update the README\n--- got ---\n%s\n--- README ---\n%s", cmdline, got, want)
	}
}

// TestReadmeTour: every kiln command of the README's code blocks that
// names only files of this repository runs as pasted: it judges (exit 0 or
// 1), never fails on its input. Commands that need the network, a path
// of the reader's own repository or write files are left out by that rule.
func TestReadmeTour(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir("../..")
	ran := 0
	inBlock := false
	for _, line := range strings.Split(string(readme), "\n") {
		if strings.HasPrefix(line, "```") {
			inBlock = line == "```sh"
			continue
		}
		if !inBlock || !strings.HasPrefix(line, "kiln ") {
			continue
		}
		cmdline, _, _ := strings.Cut(line, "#")
		args := strings.Fields(cmdline)[1:]
		if !runnable(args) {
			continue
		}
		var stdout, stderr bytes.Buffer
		if code := run(args, strings.NewReader(""), &stdout, &stderr); code > 1 {
			t.Errorf("README: %s: exit %d\n%s%s", strings.TrimSpace(cmdline), code, stdout.String(), stderr.String())
		}
		if args[0] == "lint" && strings.Contains(stdout.String(), " 0 objects:") {
			t.Errorf("README: %s judges nothing: the tour promises what it shows\n%s%s", strings.TrimSpace(cmdline), stdout.String(), stderr.String())
		}
		ran++
	}
	if ran < 5 {
		t.Errorf("ran %d of the README's commands: the tour lost its examples, or this test stopped finding them", ran)
	}
}

// runnable reports whether a README command can run here as pasted: a
// command that reads files names only paths of this repository, and none
// writes files or uses the network.
func runnable(args []string) bool {
	if len(args) == 0 {
		return false
	}
	switch args[0] {
	case "fetch", "test":
		return false
	case "explain", "version":
		return true
	}
	paths := 0
	for i := 1; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-o" || a == "--write-baseline" || a == "--new-from-rev" || a == "--values":
			return false
		case strings.HasPrefix(a, "-"):
		default:
			if _, err := os.Stat(a); err != nil {
				return false
			}
			paths++
		}
	}
	return paths > 0 && args[len(args)-1] != "."
}
