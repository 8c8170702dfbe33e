package main

import (
	"fmt"
	"go/ast"
	"go/token"
	"path/filepath"
	"strings"
)

type groupVersion struct{ Group, Version string }

type groupVersionResource struct{ Group, Version, Resource string }

func (r groupVersionResource) groupVersion() groupVersion { return groupVersion{r.Group, r.Version} }

// resourceConfig is k8s.io/apiserver's storage.ResourceConfig, with the
// rules of the release read from its resource_config.go.
type resourceConfig struct {
	versions  map[groupVersion]bool
	resources map[groupVersionResource]bool
	semantics configSemantics
}

// configSemantics are the two rules of ResourceConfig that changed over the
// releases (in 1.24, for the beta APIs kept on by default).
type configSemantics struct {
	// resourceFirst: ResourceEnabled answers a resource's own setting before
	// looking at its version (else a disabled version disables all its resources).
	resourceFirst bool
	// versionClears: EnableVersions and DisableVersions drop the settings of
	// the version's resources.
	versionClears bool
}

func newResourceConfig(s configSemantics) *resourceConfig {
	return &resourceConfig{versions: map[groupVersion]bool{}, resources: map[groupVersionResource]bool{}, semantics: s}
}

func (c *resourceConfig) setVersions(on bool, list []groupVersion) {
	for _, gv := range list {
		c.versions[gv] = on
		if c.semantics.versionClears {
			for r := range c.resources {
				if r.groupVersion() == gv {
					delete(c.resources, r)
				}
			}
		}
	}
}

func (c *resourceConfig) setResources(on bool, list []groupVersionResource) {
	for _, r := range list {
		c.resources[r] = on
	}
}

func (c *resourceConfig) versionEnabled(gv groupVersion) bool { return c.versions[gv] }

func (c *resourceConfig) resourceEnabled(r groupVersionResource) bool {
	on, set := c.resources[r]
	if c.semantics.resourceFirst {
		if set {
			return on
		}
		return c.versions[r.groupVersion()]
	}
	if !c.versions[r.groupVersion()] {
		return false
	}
	return !set || on
}

// readSemantics reads the rules of ResourceConfig from k8s.io/apiserver's
// pkg/server/storage/resource_config.go.
func readSemantics(fset *token.FileSet, apiserver string) (configSemantics, error) {
	p, err := parsePkg(fset, filepath.Join(apiserver, "pkg", "server", "storage"))
	if err != nil {
		return configSemantics{}, err
	}
	method := func(name string) *ast.FuncDecl {
		for _, f := range p.files {
			for _, d := range f.Decls {
				if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv != nil && fd.Name.Name == name {
					return fd
				}
			}
		}
		return nil
	}
	re, ev := method("ResourceEnabled"), method("EnableVersions")
	if re == nil || ev == nil || len(re.Body.List) == 0 {
		return configSemantics{}, fmt.Errorf("%s: ResourceConfig.ResourceEnabled or EnableVersions not found", p.dir)
	}
	var s configSemantics
	switch first := re.Body.List[0].(type) {
	case *ast.IfStmt: // if !o.VersionEnabled(resource.GroupVersion()) { return false }
		if !calls(first.Cond, "VersionEnabled", "versionEnabled") {
			return s, fmt.Errorf("%s: ResourceConfig.ResourceEnabled starts with a test this generator does not know", p.pos(first))
		}
	case *ast.AssignStmt: // resourceEnabled, explicitlySet := o.ResourceConfigs[resource]
		s.resourceFirst = true
	default:
		return s, fmt.Errorf("%s: ResourceConfig.ResourceEnabled has a shape this generator does not know", p.pos(first))
	}
	s.versionClears = calls(ev.Body, "removeMatchingResourcePreferences")
	return s, nil
}

// calls reports whether n calls a function or method with one of names.
func calls(n ast.Node, names ...string) bool {
	found := false
	ast.Inspect(n, func(n ast.Node) bool {
		if c, ok := n.(*ast.CallExpr); ok {
			name := ""
			switch fn := c.Fun.(type) {
			case *ast.Ident:
				name = fn.Name
			case *ast.SelectorExpr:
				name = fn.Sel.Name
			}
			for _, want := range names {
				found = found || name == want
			}
		}
		return !found
	})
	return found
}

// exprs evaluates the expressions of one release's sources that name group
// versions and resources (alias.SchemeGroupVersion, ….WithResource("r")).
type exprs struct {
	groups *groupNames
}

// groupVersion evaluates alias.SchemeGroupVersion in file.
func (e *exprs) groupVersion(x ast.Expr, file *ast.File) (groupVersion, error) {
	sel, ok := x.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "SchemeGroupVersion" {
		return groupVersion{}, fmt.Errorf("not a SchemeGroupVersion")
	}
	id, ok := sel.X.(*ast.Ident)
	if !ok {
		return groupVersion{}, fmt.Errorf("not a package's SchemeGroupVersion")
	}
	path, ok := imports(file)[id.Name]
	if !ok {
		return groupVersion{}, fmt.Errorf("%s is not an imported package", id.Name)
	}
	group, err := e.groups.ofImport(path)
	if err != nil {
		return groupVersion{}, err
	}
	return groupVersion{Group: group, Version: path[strings.LastIndex(path, "/")+1:]}, nil
}

// resource evaluates gv.WithResource(r), where r is a string literal or a
// name bound to one in binds.
func (e *exprs) resource(x ast.Expr, file *ast.File, binds map[string]string) (groupVersionResource, error) {
	call, ok := x.(*ast.CallExpr)
	if !ok || len(call.Args) != 1 {
		return groupVersionResource{}, fmt.Errorf("not a WithResource call")
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "WithResource" {
		return groupVersionResource{}, fmt.Errorf("not a WithResource call")
	}
	gv, err := e.groupVersion(sel.X, file)
	if err != nil {
		return groupVersionResource{}, err
	}
	name, ok := stringValue(call.Args[0], binds)
	if !ok {
		return groupVersionResource{}, fmt.Errorf("the resource name is not a constant string")
	}
	return groupVersionResource{gv.Group, gv.Version, strings.ToLower(name)}, nil
}

// stringValue is a string literal or a name bound to one.
func stringValue(x ast.Expr, binds map[string]string) (string, bool) {
	if s, ok := stringLit(x); ok {
		return s, true
	}
	if id, ok := x.(*ast.Ident); ok {
		s, ok := binds[id.Name]
		return s, ok
	}
	return "", false
}

// defaultConfig evaluates DefaultAPIResourceConfigSource of the release
// (pkg/master before 1.20, pkg/controlplane since): the group versions and
// resources kube-apiserver enables when no --runtime-config says otherwise.
func defaultConfig(fset *token.FileSet, kube string, e *exprs, s configSemantics) (*resourceConfig, error) {
	for _, dir := range []string{"pkg/controlplane", "pkg/master"} {
		if !exists(filepath.Join(kube, dir)) {
			continue
		}
		p, err := parsePkg(fset, filepath.Join(kube, dir))
		if err != nil {
			return nil, err
		}
		if fd, _ := p.funcDecl("DefaultAPIResourceConfigSource"); fd == nil {
			continue
		}
		ev := &configEval{p: p, e: e, semantics: s}
		return ev.call("DefaultAPIResourceConfigSource")
	}
	return nil, fmt.Errorf("%s: no DefaultAPIResourceConfigSource in pkg/controlplane or pkg/master", kube)
}

// configEval runs the statements of a function that builds a ResourceConfig.
type configEval struct {
	p         *pkg
	e         *exprs
	semantics configSemantics
}

// call evaluates the package function name, which returns a ResourceConfig.
func (ev *configEval) call(name string) (*resourceConfig, error) {
	fd, file := ev.p.funcDecl(name)
	if fd == nil {
		return nil, fmt.Errorf("%s: no function %s", ev.p.dir, name)
	}
	var cfg *resourceConfig
	for _, st := range fd.Body.List {
		switch s := st.(type) {
		case *ast.AssignStmt: // ret := serverstorage.NewResourceConfig(), or ret := DefaultGeneric…()
			call, ok := s.Rhs[0].(*ast.CallExpr)
			if !ok || len(s.Rhs) != 1 {
				return nil, fmt.Errorf("%s: unexpected assignment", ev.p.pos(s))
			}
			switch fn := call.Fun.(type) {
			case *ast.SelectorExpr:
				if fn.Sel.Name != "NewResourceConfig" {
					return nil, fmt.Errorf("%s: unexpected call %s", ev.p.pos(s), fn.Sel.Name)
				}
				cfg = newResourceConfig(ev.semantics)
			case *ast.Ident:
				var err error
				if cfg, err = ev.call(fn.Name); err != nil {
					return nil, err
				}
			default:
				return nil, fmt.Errorf("%s: unexpected assignment", ev.p.pos(s))
			}
		case *ast.ExprStmt: // ret.EnableVersions(…) and the like
			call, ok := s.X.(*ast.CallExpr)
			sel, ok2 := call.Fun.(*ast.SelectorExpr)
			if !ok || !ok2 || cfg == nil {
				return nil, fmt.Errorf("%s: unexpected statement", ev.p.pos(s))
			}
			args, err := ev.args(call, file)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", ev.p.pos(s), err)
			}
			switch sel.Sel.Name {
			case "EnableVersions", "DisableVersions":
				var list []groupVersion
				for _, a := range args {
					gv, err := ev.e.groupVersion(a.x, a.file)
					if err != nil {
						return nil, fmt.Errorf("%s: %v", ev.p.pos(a.x), err)
					}
					list = append(list, gv)
				}
				cfg.setVersions(sel.Sel.Name == "EnableVersions", list)
			case "EnableResources", "DisableResources":
				var list []groupVersionResource
				for _, a := range args {
					r, err := ev.e.resource(a.x, a.file, nil)
					if err != nil {
						return nil, fmt.Errorf("%s: %v", ev.p.pos(a.x), err)
					}
					list = append(list, r)
				}
				cfg.setResources(sel.Sel.Name == "EnableResources", list)
			default:
				return nil, fmt.Errorf("%s: unexpected call %s", ev.p.pos(s), sel.Sel.Name)
			}
		case *ast.ReturnStmt:
			if cfg == nil {
				return nil, fmt.Errorf("%s: returns before building a ResourceConfig", ev.p.pos(s))
			}
			return cfg, nil
		default:
			return nil, fmt.Errorf("%s: unexpected statement in %s", ev.p.pos(s), name)
		}
	}
	return nil, fmt.Errorf("%s: %s does not return", ev.p.pos(fd), name)
}

type arg struct {
	x    ast.Expr
	file *ast.File
}

// args expands a call's arguments: list... is the package variable's elements.
func (ev *configEval) args(call *ast.CallExpr, file *ast.File) ([]arg, error) {
	if !call.Ellipsis.IsValid() {
		out := make([]arg, len(call.Args))
		for i, a := range call.Args {
			out[i] = arg{a, file}
		}
		return out, nil
	}
	id, ok := call.Args[len(call.Args)-1].(*ast.Ident)
	if !ok || len(call.Args) != 1 {
		return nil, fmt.Errorf("unexpected arguments")
	}
	v, vf := ev.p.varValue(id.Name)
	lit, ok := v.(*ast.CompositeLit)
	if !ok {
		return nil, fmt.Errorf("%s is not a package variable holding a list", id.Name)
	}
	out := make([]arg, len(lit.Elts))
	for i, a := range lit.Elts {
		out[i] = arg{a, vf}
	}
	return out, nil
}
