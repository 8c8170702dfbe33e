package checkers

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// TestEveryCheckerListed: every checker a family under rules/ declares (a
// package-level exported variable holding a *rules.Checker) is in the list
// of checkers.go, so the CLI and the tests run it.
func TestEveryCheckerListed(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "checkers.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{} // "psa.Checker"
	ast.Inspect(f, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok {
				listed[id.Name+"."+sel.Sel.Name] = true
			}
		}
		return true
	})
	files, err := filepath.Glob("../*/*.go")
	if err != nil {
		t.Fatal(err)
	}
	declared := 0
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") || strings.Contains(file, "/internal/") {
			continue
		}
		src, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range checkerVars(src) {
			declared++
			if ref := src.Name.Name + "." + name; !listed[ref] {
				t.Errorf("%s declares the checker %s, which rules/checkers/checkers.go does not list: add it to all", file, ref)
			}
		}
	}
	if declared == 0 {
		t.Fatal("found no family declaring a checker: the search is broken")
	}
	if got := len(All()); got != declared {
		t.Errorf("All() has %d checkers, the families declare %d", got, declared)
	}
}

// checkerVars returns the exported package-level variables of f whose value
// is a &rules.Checker{...} literal or a call of NewChecker.
func checkerVars(f *ast.File) []string {
	var out []string
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.VAR {
			continue
		}
		for _, spec := range g.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, name := range vs.Names {
				if !name.IsExported() || i >= len(vs.Values) {
					continue
				}
				switch v := vs.Values[i].(type) {
				case *ast.UnaryExpr:
					if c, ok := v.X.(*ast.CompositeLit); ok && exprString(c.Type) == "rules.Checker" {
						out = append(out, name.Name)
					}
				case *ast.CallExpr:
					if exprString(v.Fun) == "NewChecker" {
						out = append(out, name.Name)
					}
				}
			}
		}
	}
	return out
}

func exprString(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		return exprString(e.X) + "." + e.Sel.Name
	}
	return ""
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
