package main

import (
	"strings"
	"testing"
)

// A stream of go test -json events as Go 1.26 writes them: a passing test,
// a skipped one with its reason, a failed one, a package that does not
// build and one that crashes outside its tests.
const stream = `{"Action":"start","Package":"k/a"}
{"Action":"run","Package":"k/a","Test":"TestOK"}
{"Action":"output","Package":"k/a","Test":"TestOK","Output":"=== RUN   TestOK\n"}
{"Action":"output","Package":"k/a","Test":"TestOK","Output":"    a_test.go:9: a log line\n"}
{"Action":"pass","Package":"k/a","Test":"TestOK"}
{"Action":"run","Package":"k/a","Test":"TestServer"}
{"Action":"output","Package":"k/a","Test":"TestServer","Output":"=== RUN   TestServer\n"}
{"Action":"output","Package":"k/a","Test":"TestServer","Output":"    a_test.go:20: kube-apiserver not built: run bash admit/conformance/build-servers.sh\n"}
{"Action":"output","Package":"k/a","Test":"TestServer","Output":"--- SKIP: TestServer (0.00s)\n"}
{"Action":"skip","Package":"k/a","Test":"TestServer"}
{"Action":"output","Package":"k/a","Output":"PASS\n"}
{"Action":"output","Package":"k/a","Output":"ok  \tk/a\t0.1s\n"}
{"Action":"pass","Package":"k/a"}
{"Action":"start","Package":"k/b"}
{"Action":"run","Package":"k/b","Test":"TestBad"}
{"Action":"output","Package":"k/b","Test":"TestBad","Output":"=== RUN   TestBad\n"}
{"Action":"output","Package":"k/b","Test":"TestBad","Output":"    b_test.go:5: got 1, want 2\n"}
{"Action":"output","Package":"k/b","Test":"TestBad","Output":"--- FAIL: TestBad (0.00s)\n"}
{"Action":"fail","Package":"k/b","Test":"TestBad"}
{"Action":"output","Package":"k/b","Output":"FAIL\n"}
{"Action":"output","Package":"k/b","Output":"FAIL\tk/b\t0.1s\n"}
{"Action":"fail","Package":"k/b"}
{"ImportPath":"k/c [k/c.test]","Action":"build-output","Output":"c/c.go:3:1: syntax error\n"}
{"ImportPath":"k/c [k/c.test]","Action":"build-fail"}
{"Action":"start","Package":"k/d"}
{"Action":"output","Package":"k/d","Output":"panic: test timed out after 30m0s\n"}
{"Action":"fail","Package":"k/d"}
`

func TestSummarize(t *testing.T) {
	var out strings.Builder
	s, err := Summarize(strings.NewReader(stream), &out)
	if err != nil {
		t.Fatal(err)
	}
	if s.Passed != 1 || s.Failed != 1 || s.Skipped != 1 || s.BuildFailed != 1 || s.PackagesFailed != 1 || s.OK() {
		t.Errorf("counts: %+v", s)
	}
	got := out.String()
	for _, want := range []string{
		"ok  \tk/a\t0.1s\n",
		"    b_test.go:5: got 1, want 2\n",
		"FAIL\tk/b\t0.1s\n",
		"c/c.go:3:1: syntax error\n",
		"panic: test timed out after 30m0s\n",
		"  k/a TestServer: a_test.go:20: kube-apiserver not built: run bash admit/conformance/build-servers.sh\n",
		"To run them: bash .ci/run",
		"2 packages failed outside",
		"1 passed, 3 failed, 1 skipped\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	for _, not := range []string{"a log line", "=== RUN", "PASS\n"} {
		if strings.Contains(got, not) {
			t.Errorf("output has %q, which go test without -v does not print:\n%s", not, got)
		}
	}
}

func TestUnfinished(t *testing.T) {
	var out strings.Builder
	s, err := Summarize(strings.NewReader(`{"Action":"start","Package":"k/e"}
{"Action":"run","Package":"k/e","Test":"TestLong"}
`), &out)
	if err != nil {
		t.Fatal(err)
	}
	if s.Unfinished != 1 || s.OK() || !strings.Contains(out.String(), "k/e: its tests never finished") {
		t.Errorf("%+v\n%s", s, out.String())
	}
}
