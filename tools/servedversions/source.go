package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// pkg is one Go package of a release's sources, parsed.
type pkg struct {
	dir   string
	fset  *token.FileSet
	files []*ast.File
}

// parsePkg parses the non-test Go files of dir.
func parsePkg(fset *token.FileSet, dir string) (*pkg, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	p := &pkg{dir: dir, fset: fset}
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		p.files = append(p.files, f)
	}
	if len(p.files) == 0 {
		return nil, fmt.Errorf("%s: no Go files", dir)
	}
	return p, nil
}

// funcDecl returns the package-level function (not method) name.
func (p *pkg) funcDecl(name string) (*ast.FuncDecl, *ast.File) {
	for _, f := range p.files {
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && fd.Name.Name == name {
				return fd, f
			}
		}
	}
	return nil, nil
}

// varValue returns the value of the package-level variable name.
func (p *pkg) varValue(name string) (ast.Expr, *ast.File) {
	for _, f := range p.files {
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.VAR {
				continue
			}
			for _, s := range gd.Specs {
				vs := s.(*ast.ValueSpec)
				for i, n := range vs.Names {
					if n.Name == name && i < len(vs.Values) {
						return vs.Values[i], f
					}
				}
			}
		}
	}
	return nil, nil
}

// pos says where n is, for error messages.
func (p *pkg) pos(n ast.Node) string { return p.fset.Position(n.Pos()).String() }

// imports maps each import name of f to its path.
func imports(f *ast.File) map[string]string {
	m := map[string]string{}
	for _, s := range f.Imports {
		path, _ := strconv.Unquote(s.Path.Value)
		name := path[strings.LastIndex(path, "/")+1:]
		if s.Name != nil {
			name = s.Name.Name
		}
		m[name] = path
	}
	return m
}

// stringLit returns the value of a string literal.
func stringLit(x ast.Expr) (string, bool) {
	lit, ok := x.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(lit.Value)
	return s, err == nil
}

// groupNames reads the API group names of a release: the GroupName
// constant of pkg/apis/<dir>/register.go, by <dir>.
type groupNames struct {
	kube  string
	fset  *token.FileSet
	cache map[string]string
}

// ofImport returns the group of a package path such as k8s.io/api/apps/v1
// or k8s.io/kubernetes/pkg/apis/apps (the group name of pkg/apis/apps).
func (g *groupNames) ofImport(path string) (string, error) {
	var dir string
	switch {
	case strings.HasPrefix(path, "k8s.io/api/"):
		parts := strings.Split(path, "/")
		if len(parts) != 4 {
			return "", fmt.Errorf("%s is not a k8s.io/api group version package", path)
		}
		dir = parts[2]
	case strings.HasPrefix(path, "k8s.io/kubernetes/pkg/apis/"):
		dir = strings.TrimPrefix(path, "k8s.io/kubernetes/pkg/apis/")
	default:
		return "", fmt.Errorf("%s: no API group known for this package", path)
	}
	if name, ok := g.cache[dir]; ok {
		return name, nil
	}
	file := filepath.Join(g.kube, "pkg", "apis", dir, "register.go")
	f, err := parser.ParseFile(g.fset, file, nil, parser.SkipObjectResolution)
	if err != nil {
		return "", err
	}
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST {
			continue
		}
		for _, s := range gd.Specs {
			vs := s.(*ast.ValueSpec)
			for i, n := range vs.Names {
				if n.Name != "GroupName" || i >= len(vs.Values) {
					continue
				}
				if name, ok := stringLit(vs.Values[i]); ok {
					g.cache[dir] = name
					return name, nil
				}
			}
		}
	}
	return "", fmt.Errorf("%s: no GroupName constant", file)
}

// exists reports whether path exists.
func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
