// Package conformance compares kiln's verdicts with a real kube-apiserver
// v1.37.2's (built from the Go module proxy by build-servers.sh, on
// 127.0.0.1). Each corpus is linted as `kiln lint` lints it (charts and
// kustomizations rendered) and the same objects, as read or rendered, are
// sent to a fresh server as kubectl sends them: Namespaces, CRDs, policies
// and bindings are created for real, every other object is sent as a
// server-side dry-run with fieldValidation=Strict (what `kubectl apply
// --dry-run=server` sends), and so is a Pod made from every pod template
// (enforce applies only to Pods). The server's refusals, denials and
// warnings are compared with kiln's findings; every disagreement is a test
// failure unless it is named in knownDifferences with its reason.
package conformance

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// A corpus is one independent case: a fresh server judges it.
type corpus struct {
	name  string
	paths []string
}

func shared(p string) string { return filepath.Join("..", "..", "..", "shared", p) }

// resolved makes paths absolute, through no symbolic link (../../shared is
// one in a worktree): `cd project && kiln lint .` judges a project as it
// does such a path, whereas through a link kiln's discovery misses which
// kustomizations include which.
func resolved(t *testing.T, paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		a, err := filepath.Abs(p)
		if err == nil {
			a, err = filepath.EvalSymlinks(a)
		}
		if err != nil {
			t.Fatal(err)
		}
		out[i] = a
	}
	return out
}

// corpora are the test's own corpora (testdata/corpus; testdata/rendered,
// one small case of each kind real trees hold), the examples' compiled
// output, every
// project of ../shared/realworld (as its repository holds it: kiln renders
// its charts and kustomizations) and the seeded generator's output.
func corpora(t *testing.T) []corpus {
	cs := []corpus{
		{"testdata", []string{"testdata/corpus"}},
		{"rendered", []string{"testdata/rendered"}},
		{"examples", examplesOut(t)},
	}
	projects, _ := os.ReadDir(shared("realworld"))
	for _, p := range projects {
		if p.IsDir() {
			cs = append(cs, corpus{"realworld/" + p.Name(), []string{shared(filepath.Join("realworld", p.Name()))}})
		}
	}
	if gen := "../../bench/gen-corpus"; fileExists(gen) {
		cs = append(cs, corpus{"generated", []string{generated(t, gen)}})
	}
	for i := range cs {
		cs[i].paths = resolved(t, cs[i].paths)
	}
	return cs
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

func examplesOut(t *testing.T) []string {
	outs, _ := filepath.Glob("../../examples/*/out")
	sort.Strings(outs)
	return outs
}

// generated writes 300 objects of the seeded generator into a temp dir.
func generated(t *testing.T, gen string) string {
	dir := filepath.Join(t.TempDir(), "corpus")
	cmd := execCommand(gen, "300", dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("gen-corpus: %v\n%s", err, out)
	}
	return dir
}

// verdict is one side's answer for one request.
type verdict struct {
	rejected bool // refused before admission (decode, validation, not served)
	denied   bool // denied by admission (Pod Security enforce, a Deny policy)
	psaWarn  bool // Pod Security warnings
	polWarn  bool // policy Warn
	warn     bool // the server's other warnings (deprecated versions, fields it ignores)
	detail   string
}

// row counts one corpus's comparison.
type row struct {
	name string
	// objects are the objects sent (identical copies included), copies
	// those identical to one sent before (judged by the same request).
	objects, copies                      int
	rejected, missed, falseRejects       int
	denied, deniedMissed, deniedFalse    int
	psaWarnAgree, psaWarnDiffer          int
	polWarnAgree, polWarnDiffer          int
	warnAgree, warnDiffer                int
	pods, podDenied, podMissed, podFalse int
	podsNotCompared                      int
	own                                  int // kiln errors of its own rules, which no server gives
	noCRD, undecodable, notRendered      int
	named                                int // disagreements named in knownDifferences
	seconds                              float64
}

// header and cells are the table the test logs and writes to
// KILN_CONFORMANCE_TABLE.
const header = "| corpus | objects sent (identical copies) | server rejections | kiln misses | kiln false rejections | admission denials | kiln misses | kiln false | PSA warnings agree | differ | policy warnings agree | differ | other server warnings agree | differ | pods from templates | PSA enforce denials | kiln misses | kiln false | pods not compared | kiln's own errors (named) | not compared: custom resources without CRD | undecodable | charts/kustomizations not rendered | disagreements named | seconds |\n" +
	"|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n"

func (r row) cells() string {
	return fmt.Sprintf("| %s | %d (%d) | %d | %d | %d | %d | %d | %d | %d | %d | %d | %d | %d | %d | %d | %d | %d | %d | %d | %d | %d | %d | %d | %d | %.0f |\n", r.name, r.objects, r.copies,
		r.rejected, r.missed, r.falseRejects, r.denied, r.deniedMissed, r.deniedFalse, r.psaWarnAgree, r.psaWarnDiffer,
		r.polWarnAgree, r.polWarnDiffer, r.warnAgree, r.warnDiffer,
		r.pods, r.podDenied, r.podMissed, r.podFalse, r.podsNotCompared, r.own, r.noCRD, r.undecodable, r.notRendered, r.named, r.seconds)
}

// TestConformance runs every corpus on its own server (one subtest each:
// -run 'TestConformance/realworld/argo-cd' runs one) and logs the table of
// counts, also written to the file KILN_CONFORMANCE_TABLE names with the
// disagreements.
func TestConformance(t *testing.T) {
	needServers(t)
	table, failures, named, notes := runCorpora(t, corpora(t))
	t.Logf("conformance against kube-apiserver v1.37.2:\n%s", table)
	if out := os.Getenv("KILN_CONFORMANCE_TABLE"); out != "" {
		text := table + "\n## Disagreements not named\n\n" + strings.Join(failures, "\n") + "\n\n## Named differences\n\n" + strings.Join(named, "\n") +
			"\n\n## Not compared, and how the server was set up\n\n" + strings.Join(notes, "\n") + "\n"
		if err := os.WriteFile(out, []byte(text), 0o644); err != nil {
			t.Error(err)
		}
	}
}

// runCorpora runs each corpus on its own server, one subtest each, and
// returns the table of counts (header and a row per corpus) and what the
// corpora found: the disagreements not named (each also a test error), the
// named differences, and what was not compared.
func runCorpora(t *testing.T, cs []corpus) (table string, failures, named, notes []string) {
	var b strings.Builder
	b.WriteString(header)
	for _, c := range cs {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			cmp := runCorpus(t, c)
			cmp.row.seconds = time.Since(start).Seconds()
			b.WriteString(cmp.row.cells())
			failures = append(failures, cmp.failures()...)
			named = append(named, cmp.named...)
			notes = append(notes, cmp.notes...)
			for _, f := range cmp.failures() {
				t.Error(f)
			}
		})
	}
	return b.String(), failures, named, notes
}
