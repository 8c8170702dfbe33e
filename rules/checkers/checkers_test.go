package checkers

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestEveryCheckerListed: every package under rules/ that registers a
// checker is imported by checkers.go, so the CLI and the tests run it.
func TestEveryCheckerListed(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "checkers.go", nil, parser.ImportsOnly)
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		listed[p] = true
	}
	files, err := filepath.Glob("../*/*.go")
	if err != nil {
		t.Fatal(err)
	}
	registering := 0
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(src), "rules.Register(") {
			continue
		}
		registering++
		pkg := "github.com/kilnhq/kiln/rules/" + filepath.Base(filepath.Dir(file))
		if !listed[pkg] {
			t.Errorf("%s registers a checker but rules/checkers/checkers.go does not import %s: add it there", file, pkg)
		}
	}
	if registering == 0 {
		t.Fatal("found no package registering a checker: the search is broken")
	}
	if got := len(All()); got != registering {
		t.Errorf("All() has %d checkers, %d files register one", got, registering)
	}
}

func TestOwnLeavesOutServerAndUserChecks(t *testing.T) {
	names := map[string]bool{}
	for _, c := range All() {
		if names[c.Name] {
			t.Errorf("two checkers named %q", c.Name)
		}
		names[c.Name] = true
	}
	for n := range notOwn {
		if !names[n] {
			t.Errorf("notOwn names %q, which is no checker", n)
		}
	}
	own := Own()
	if len(own) != len(All())-len(notOwn) {
		t.Errorf("Own() has %d checkers, want %d", len(own), len(All())-len(notOwn))
	}
	for _, c := range own {
		if notOwn[c.Name] {
			t.Errorf("Own() includes %q", c.Name)
		}
	}
}
