// Package designcheck holds the test that keeps docs/design.md §2 true: its
// package table names every package of the module, in an order that
// imports follow (a package imports only packages listed below it, or in
// its own row).
package designcheck

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/kilnhq/kiln/"

// notInTable are the packages the table leaves out on purpose: programs and
// tests that no package imports.
var notInTable = map[string]string{
	"cmd/kiln/e2e":      "end-to-end tests (test files only)",
	"admit/conformance": "the conformance test against kube-apiserver (test files only)",
	"tools/designcheck": "this test",
}

// testSupport are the packages only tests import: they may import any
// package (docs/design.md §2 says so).
var testSupport = map[string]bool{
	"report/reporttest":       true,
	"rules/internal/ruletest": true,
	"internal/golden":         true,
}

// table reads §2's rows: each row's packages, in order.
func table(t *testing.T) [][]string {
	f, err := os.Open(filepath.Join("..", "..", "docs", "design.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows [][]string
	in := false
	name := regexp.MustCompile("`([^`]+)`")
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "## 2. "):
			in = true
		case strings.HasPrefix(line, "## ") && in:
			return rows
		case in && strings.HasPrefix(line, "| `"):
			cell := strings.SplitN(line, "|", 3)[1]
			var row []string
			for _, m := range name.FindAllStringSubmatch(cell, -1) {
				row = append(row, m[1])
			}
			rows = append(rows, row)
		}
	}
	return rows
}

// packages lists the module's packages and the module packages each imports.
func packages(t *testing.T) map[string][]string {
	cmd := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "./...")
	cmd.Dir = filepath.Join("..", "..")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	pkgs := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		p := strings.TrimPrefix(fields[0], module)
		pkgs[p] = nil
		for _, imp := range fields[1:] {
			if strings.HasPrefix(imp, module) {
				pkgs[p] = append(pkgs[p], strings.TrimPrefix(imp, module))
			}
		}
	}
	return pkgs
}

// rank gives each package its row: a name ending in "/<family>" stands for
// every package below that folder no other row names.
func rank(rows [][]string, pkgs map[string][]string) (map[string]int, []string) {
	ranks := map[string]int{}
	type wild struct {
		prefix string
		row    int
	}
	var wilds []wild
	for i, row := range rows {
		for _, p := range row {
			if pre, ok := strings.CutSuffix(p, "<family>"); ok {
				wilds = append(wilds, wild{pre, i})
				continue
			}
			ranks[p] = i
		}
	}
	var unlisted []string
	for p := range pkgs {
		if _, ok := ranks[p]; ok {
			continue
		}
		placed := false
		for _, w := range wilds {
			if strings.HasPrefix(p, w.prefix) {
				ranks[p], placed = w.row, true
			}
		}
		if !placed {
			unlisted = append(unlisted, p)
		}
	}
	sort.Strings(unlisted)
	return ranks, unlisted
}

func TestPackageTable(t *testing.T) {
	rows := table(t)
	if len(rows) < 10 {
		t.Fatalf("docs/design.md §2: %d rows read; the table moved?", len(rows))
	}
	pkgs := packages(t)
	ranks, unlisted := rank(rows, pkgs)
	for _, p := range unlisted {
		if _, ok := notInTable[p]; !ok {
			t.Errorf("package %s is not in docs/design.md §2's table: add its row (or, for a program or test, to notInTable here)", p)
		}
	}
	for p := range ranks {
		if _, ok := pkgs[p]; !ok && !strings.Contains(p, "<") {
			t.Errorf("docs/design.md §2 names %s, which is no package of the module", p)
		}
	}
	var up []string
	for p, imps := range pkgs {
		r, ok := ranks[p]
		if !ok || testSupport[p] {
			continue
		}
		for _, q := range imps {
			if rq, ok := ranks[q]; ok && rq < r {
				up = append(up, p+" imports "+q+", listed above it")
			}
		}
	}
	sort.Strings(up)
	for _, u := range up {
		t.Errorf("import against the table's order: %s (move a row, or the code)", u)
	}
}

// topLevel are the module's top-level Go folders, as docs/design.md §2 lists
// them: a new one is a decision for the design, not a side effect.
var topLevel = []string{"admit", "cmd", "compiler", "discover", "internal", "lint", "manifest", "report", "rules", "schemas", "session", "tools"}

func TestTopLevelFolders(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.Dir}}", "github.com/kilnhq/kiln/...").Output()
	if err != nil {
		t.Fatal(err)
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, dir := range strings.Fields(string(out)) {
		rel, err := filepath.Rel(root, dir)
		if err != nil || rel == "." {
			continue
		}
		got[strings.Split(filepath.ToSlash(rel), "/")[0]] = true
	}
	var have []string
	for d := range got {
		have = append(have, d)
	}
	sort.Strings(have)
	if strings.Join(have, " ") != strings.Join(topLevel, " ") {
		t.Errorf("top-level Go folders are %v, docs/design.md §2 lists %v: keep a package inside one of them, or change the design", have, topLevel)
	}
	design, err := os.ReadFile("../../docs/design.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range topLevel {
		if !strings.Contains(string(design), "`"+d+"` (") {
			t.Errorf("docs/design.md §2 does not describe the top-level folder %s", d)
		}
	}
}
