package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// registration is one resource that a REST storage provider
// (pkg/registry/<group>/rest) puts in a version's storage map, and whether
// it does so with the release's default configuration.
type registration struct {
	groupVersionResource // Version "" when the function serves every version of the group
	on                   bool
	where                string
	// assumed are the conditions on the way that the generator could not
	// evaluate and took as true.
	assumed []string
}

// versionFunc matches the providers' per-version functions (v1beta1Storage),
// for the functions storageVersions does not find.
var versionFunc = regexp.MustCompile(`^(v[0-9]+(?:alpha[0-9]+|beta[0-9]+)?)Storage$`)

// providers scans the REST storage providers of kube, except the core
// group's (pkg/registry/core), and evaluates each registration's conditions
// (the resource config, feature gates) as kube-apiserver runs them with
// its defaults. Conditions it cannot evaluate count as true (and are listed
// in the registration's assumed).
func providers(fset *token.FileSet, kube string, e *exprs, cfg *resourceConfig, g gates) ([]registration, error) {
	dirs, err := providerDirs(fset, kube)
	if err != nil {
		return nil, err
	}
	var out []registration
	for _, dir := range dirs {
		p, err := parsePkg(fset, dir)
		if err != nil {
			return nil, err
		}
		group, err := providerGroup(p, e)
		if err != nil {
			return nil, err
		}
		versions, err := storageVersions(p, e)
		if err != nil {
			return nil, err
		}
		for _, f := range p.files {
			for _, d := range f.Decls {
				fd, ok := d.(*ast.FuncDecl)
				if !ok || fd.Body == nil {
					continue
				}
				vs := versions[fd.Name.Name]
				if vs == nil {
					if m := versionFunc.FindStringSubmatch(fd.Name.Name); m != nil {
						vs = []string{m[1]}
					} else {
						vs = []string{""}
					}
				}
				for _, version := range vs {
					w := &walker{p: p, file: f, e: e, cfg: cfg, gates: g, group: group, version: version, binds: map[string]string{}, on: true, out: &out}
					if err := w.stmts(fd.Body.List); err != nil {
						return nil, err
					}
				}
			}
		}
	}
	return out, nil
}

// storageVersions finds which version's storage map each provider function
// builds, from what NewRESTStorage does with its result:
// apiGroupInfo.VersionedResourcesStorageMap[v1.SchemeGroupVersion.Version] = storageMap,
// where storageMap came from p.v1Storage(…) (the function's name may say
// another version: 1.31's networking v1alpha1Storage builds v1beta1's map).
func storageVersions(p *pkg, e *exprs) (map[string][]string, error) {
	out := map[string][]string{}
	var bad error
	for _, f := range p.files {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			from := map[string]string{} // variable -> the method whose result it holds
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				as, ok := n.(*ast.AssignStmt)
				if !ok || bad != nil {
					return bad == nil
				}
				if len(as.Rhs) == 1 {
					if m := methodCalled(as.Rhs[0]); m != "" {
						if id, ok := as.Lhs[0].(*ast.Ident); ok {
							from[id.Name] = m
						}
					}
				}
				ix, ok := as.Lhs[0].(*ast.IndexExpr)
				if !ok || len(as.Rhs) != 1 {
					return true
				}
				if sel, ok := ix.X.(*ast.SelectorExpr); !ok || sel.Sel.Name != "VersionedResourcesStorageMap" {
					return true
				}
				m := methodCalled(as.Rhs[0])
				if id, ok := as.Rhs[0].(*ast.Ident); ok {
					m = from[id.Name]
				}
				sel, ok := ix.Index.(*ast.SelectorExpr)
				if !ok || sel.Sel.Name != "Version" || m == "" {
					bad = fmt.Errorf("%s: a storage map this generator cannot follow", p.pos(as))
					return false
				}
				gv, err := e.groupVersion(sel.X, f)
				if err != nil {
					bad = fmt.Errorf("%s: %v", p.pos(as), err)
					return false
				}
				out[m] = append(out[m], gv.Version)
				return true
			})
		}
	}
	return out, bad
}

// methodCalled is M for a call p.M(…), else "".
func methodCalled(x ast.Expr) string {
	call, ok := x.(*ast.CallExpr)
	if !ok {
		return ""
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return ""
	}
	return sel.Sel.Name
}

// restPackage matches the import path of a group's REST storage provider.
var restPackage = regexp.MustCompile(`^k8s\.io/kubernetes/pkg/registry/([^/]+)/rest$`)

// providerDirs lists the providers kube-apiserver builds: the
// pkg/registry/<group>/rest packages that pkg/master or pkg/controlplane
// (and pkg/controlplane/apiserver, since 1.30) import, except the core
// group's.
func providerDirs(fset *token.FileSet, kube string) ([]string, error) {
	seen := map[string]bool{}
	for _, dir := range []string{"pkg/master", "pkg/controlplane", "pkg/controlplane/apiserver"} {
		files, _ := filepath.Glob(filepath.Join(kube, dir, "*.go"))
		for _, file := range files {
			if strings.HasSuffix(file, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, file, nil, parser.ImportsOnly)
			if err != nil {
				return nil, err
			}
			for path := range maps.Values(imports(f)) {
				if m := restPackage.FindStringSubmatch(path); m != nil && m[1] != "core" {
					seen[filepath.Join(kube, "pkg", "registry", m[1], "rest")] = true
				}
			}
		}
	}
	if len(seen) == 0 {
		return nil, fmt.Errorf("%s: pkg/master and pkg/controlplane import no REST storage provider", kube)
	}
	return slices.Sorted(maps.Keys(seen)), nil
}

// providerGroup is the group a provider's GroupName method returns.
func providerGroup(p *pkg, e *exprs) (string, error) {
	group, found := "", false
	for _, f := range p.files {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv == nil || fd.Name.Name != "GroupName" || len(fd.Body.List) != 1 {
				continue
			}
			ret, ok := fd.Body.List[0].(*ast.ReturnStmt)
			if !ok || len(ret.Results) != 1 {
				continue
			}
			sel, ok := ret.Results[0].(*ast.SelectorExpr)
			if !ok {
				return "", fmt.Errorf("%s: GroupName does not return pkg.GroupName", p.pos(fd))
			}
			id, _ := sel.X.(*ast.Ident)
			if id == nil {
				return "", fmt.Errorf("%s: GroupName does not return pkg.GroupName", p.pos(fd))
			}
			g, err := e.groups.ofImport(imports(f)[id.Name])
			if err != nil {
				return "", fmt.Errorf("%s: %v", p.pos(fd), err)
			}
			if found && g != group {
				return "", fmt.Errorf("%s: providers of two groups (%q, %q)", p.dir, group, g)
			}
			group, found = g, true
		}
	}
	if !found {
		return "", fmt.Errorf("%s: no GroupName method", p.dir)
	}
	return group, nil
}

// walker follows the statements of a provider function, with the truth of
// the enclosing conditions and the names bound to strings
// (if resource := "ingresses"; …).
type walker struct {
	p              *pkg
	file           *ast.File
	e              *exprs
	cfg            *resourceConfig
	gates          gates
	group, version string
	binds          map[string]string
	on             bool
	assumed        []string
	out            *[]registration
}

// child is a nested scope under condition on.
func (w *walker) child(on bool) *walker {
	c := *w
	c.binds = make(map[string]string, len(w.binds))
	for k, v := range w.binds {
		c.binds[k] = v
	}
	c.on = w.on && on
	return &c
}

func (w *walker) stmts(list []ast.Stmt) error {
	for _, s := range list {
		if err := w.stmt(s); err != nil {
			return err
		}
	}
	return nil
}

func (w *walker) stmt(s ast.Stmt) error {
	switch s := s.(type) {
	case *ast.BlockStmt:
		return w.child(true).stmts(s.List)
	case *ast.IfStmt:
		c := w.child(true)
		if s.Init != nil {
			if err := c.stmt(s.Init); err != nil {
				return err
			}
		}
		cond, err := c.eval(s.Cond)
		if err != nil {
			return err
		}
		if err := c.child(cond.then).stmts(s.Body.List); err != nil {
			return err
		}
		if s.Else != nil {
			return c.child(cond.els).stmt(s.Else)
		}
	case *ast.ForStmt:
		return w.child(true).stmts(s.Body.List)
	case *ast.RangeStmt:
		return w.child(true).stmts(s.Body.List)
	case *ast.AssignStmt:
		w.assign(s)
	}
	return nil
}

// assign records name := "string" bindings and storage[resource] = …
// registrations (and map[string]rest.Storage{"resource": …} literals).
func (w *walker) assign(s *ast.AssignStmt) {
	for i, lhs := range s.Lhs {
		if i >= len(s.Rhs) {
			break
		}
		if id, ok := lhs.(*ast.Ident); ok {
			if v, ok := stringLit(s.Rhs[i]); ok {
				w.binds[id.Name] = v
			}
		}
		if ix, ok := lhs.(*ast.IndexExpr); ok {
			if name, ok := stringValue(ix.Index, w.binds); ok {
				w.register(name, ix)
			}
		}
		if lit, ok := s.Rhs[i].(*ast.CompositeLit); ok {
			if mt, ok := lit.Type.(*ast.MapType); ok && typeName(mt.Key) == "string" && typeName(mt.Value) == "Storage" {
				for _, el := range lit.Elts {
					kv := el.(*ast.KeyValueExpr)
					if name, ok := stringLit(kv.Key); ok {
						w.register(name, kv)
					}
				}
			}
		}
	}
}

func (w *walker) register(name string, at ast.Node) {
	if strings.Contains(name, "/") {
		return // a subresource
	}
	*w.out = append(*w.out, registration{
		groupVersionResource: groupVersionResource{w.group, w.version, strings.ToLower(name)},
		on:                   w.on,
		where:                w.p.pos(at),
		assumed:              w.assumed,
	})
}

// truth is what a condition makes of the branches of an if: whether the
// then branch runs, and whether the else branch does. A condition the
// generator cannot evaluate lets both run.
type truth struct{ then, els bool }

func known(v bool) truth { return truth{v, !v} }

// eval evaluates a condition with the release's defaults.
func (w *walker) eval(x ast.Expr) (truth, error) {
	switch x := x.(type) {
	case *ast.ParenExpr:
		return w.eval(x.X)
	case *ast.UnaryExpr:
		if x.Op == token.NOT {
			v, err := w.eval(x.X)
			return truth{v.els, v.then}, err
		}
	case *ast.BinaryExpr:
		if x.Op == token.LAND || x.Op == token.LOR {
			a, err := w.eval(x.X)
			if err != nil {
				return truth{}, err
			}
			b, err := w.eval(x.Y)
			if err != nil {
				return truth{}, err
			}
			if x.Op == token.LAND {
				return truth{a.then && b.then, a.els || b.els}, nil
			}
			return truth{a.then || b.then, a.els && b.els}, nil
		}
	case *ast.CallExpr:
		sel, ok := x.Fun.(*ast.SelectorExpr)
		if !ok || len(x.Args) != 1 {
			break
		}
		switch sel.Sel.Name {
		case "ResourceEnabled":
			if r, err := w.e.resource(x.Args[0], w.file, w.binds); err == nil {
				return known(w.cfg.resourceEnabled(r)), nil
			}
		case "VersionEnabled":
			if gv, err := w.e.groupVersion(x.Args[0], w.file); err == nil {
				return known(w.cfg.versionEnabled(gv)), nil
			}
		case "Enabled":
			if typeName(sel.X) != "DefaultFeatureGate" {
				break
			}
			name := typeName(x.Args[0])
			on, ok := w.gates[name]
			if !ok {
				return truth{}, fmt.Errorf("%s: feature gate %s has no default in pkg/features", w.p.pos(x), name)
			}
			return known(on), nil
		}
	}
	w.assumed = append(w.assumed[:len(w.assumed):len(w.assumed)], fmt.Sprintf("%s (%s)", exprString(w.p.fset, x), w.p.pos(x)))
	return truth{true, true}, nil
}
