package main

import (
	"strings"
	"testing"
)

func TestVersionFlag(t *testing.T) {
	_, want, _ := runKiln(t, "", "version")
	for _, args := range [][]string{{"--version"}, {"-v"}} {
		code, stdout, stderr := runKiln(t, "", args...)
		if code != 0 || stdout != want {
			t.Errorf("%v: exit %d, stdout %q (stderr %q); want the output of kiln version %q", args, code, stdout, stderr, want)
		}
	}
	if !strings.HasPrefix(want, "kiln ") || !strings.Contains(want, "(commit ") || !strings.Contains(want, "Kubernetes ") {
		t.Errorf("kiln version: %q", want)
	}
}
