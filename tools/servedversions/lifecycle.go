package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
)

// removals reads the APILifecycleRemoved methods of k8s.io/api
// (<dir>/<version>/zz_generated.prerelease-lifecycle.go): the minor at which
// the API server stops serving each kind, by its resource expiration
// evaluator (k8s.io/apiserver pkg/server/deleted_kinds.go, since 1.21),
// even where a provider still registers it.
func removals(fset *token.FileSet, api string, groups *groupNames) (map[groupVersionKind]int, error) {
	files, err := filepath.Glob(filepath.Join(api, "*", "*", "zz_generated.prerelease-lifecycle.go"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s: no zz_generated.prerelease-lifecycle.go", api)
	}
	out := map[groupVersionKind]int{}
	for _, file := range files {
		rel, _ := filepath.Rel(api, filepath.Dir(file))
		group, err := groups.ofImport("k8s.io/api/" + filepath.ToSlash(rel))
		if err != nil {
			return nil, err
		}
		version := filepath.Base(rel)
		f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv == nil || fd.Name.Name != "APILifecycleRemoved" {
				continue
			}
			star, ok := fd.Recv.List[0].Type.(*ast.StarExpr)
			kind, ok2 := star.X.(*ast.Ident)
			if !ok || !ok2 {
				return nil, fmt.Errorf("%s: unexpected receiver", fset.Position(fd.Pos()))
			}
			major, minor, ok := returnsPair(fd)
			if !ok || major != 1 {
				return nil, fmt.Errorf("%s: APILifecycleRemoved does not return 1, N", fset.Position(fd.Pos()))
			}
			out[groupVersionKind{group, version, kind.Name}] = minor
		}
	}
	return out, nil
}

// returnsPair reads a body that is just return A, B (integers).
func returnsPair(fd *ast.FuncDecl) (int, int, bool) {
	if len(fd.Body.List) != 1 {
		return 0, 0, false
	}
	ret, ok := fd.Body.List[0].(*ast.ReturnStmt)
	if !ok || len(ret.Results) != 2 {
		return 0, 0, false
	}
	var n [2]int
	for i, r := range ret.Results {
		lit, ok := r.(*ast.BasicLit)
		if !ok || lit.Kind != token.INT {
			return 0, 0, false
		}
		v, err := strconv.Atoi(strings.TrimSpace(lit.Value))
		if err != nil {
			return 0, 0, false
		}
		n[i] = v
	}
	return n[0], n[1], true
}
