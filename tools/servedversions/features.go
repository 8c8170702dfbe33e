package main

import (
	"fmt"
	"go/ast"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
)

// gates are the default values of a release's feature gates, read from the
// feature maps of k8s.io/kubernetes/pkg/features (featuregate.FeatureSpec
// values before 1.31, featuregate.VersionedSpecs since: the spec of the
// newest version not after the release).
type gates map[string]bool

// readGates reads pkg/features of kube as at 1.minor.
func readGates(fset *token.FileSet, kube string, minor int) (gates, error) {
	p, err := parsePkg(fset, filepath.Join(kube, "pkg", "features"))
	if err != nil {
		return nil, err
	}
	g := gates{}
	best := map[string]int{} // the version of the VersionedSpec chosen for a gate
	var bad error
	for _, f := range p.files {
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.CompositeLit)
			if !ok || bad != nil {
				return bad == nil
			}
			mt, ok := lit.Type.(*ast.MapType)
			if !ok {
				return true
			}
			switch typeName(mt.Value) {
			case "FeatureSpec":
				for _, el := range lit.Elts {
					kv := el.(*ast.KeyValueExpr)
					on, ok := specDefault(kv.Value)
					if !ok {
						bad = fmt.Errorf("%s: a feature gate default this generator cannot read", p.pos(kv))
						return false
					}
					g[gateName(kv.Key)] = on
				}
				return false
			case "VersionedSpecs":
				for _, el := range lit.Elts {
					kv := el.(*ast.KeyValueExpr)
					name := gateName(kv.Key)
					specs, ok := kv.Value.(*ast.CompositeLit)
					if !ok {
						bad = fmt.Errorf("%s: a feature gate this generator cannot read", p.pos(kv))
						return false
					}
					for _, s := range specs.Elts {
						v, ok := specVersion(s)
						on, ok2 := specDefault(s)
						if !ok || !ok2 {
							bad = fmt.Errorf("%s: a feature gate version this generator cannot read", p.pos(s))
							return false
						}
						if v <= minor && v >= best[name] {
							best[name], g[name] = v, on
						}
					}
				}
				return false
			}
			return true
		})
	}
	if bad != nil {
		return nil, bad
	}
	if len(g) == 0 {
		return nil, fmt.Errorf("%s: no feature gates found", p.dir)
	}
	return g, nil
}

// typeName is the name of a (qualified) type.
func typeName(x ast.Expr) string {
	switch t := x.(type) {
	case *ast.Ident:
		return t.Name
	case *ast.SelectorExpr:
		return t.Sel.Name
	}
	return ""
}

// gateName is a feature map key: Name or pkg.Name.
func gateName(x ast.Expr) string { return typeName(x) }

// field returns the value of a keyed field of a composite literal.
func field(x ast.Expr, name string) ast.Expr {
	lit, ok := x.(*ast.CompositeLit)
	if !ok {
		return nil
	}
	for _, el := range lit.Elts {
		if kv, ok := el.(*ast.KeyValueExpr); ok {
			if id, ok := kv.Key.(*ast.Ident); ok && id.Name == name {
				return kv.Value
			}
		}
	}
	return nil
}

// specDefault reads Default: true|false.
func specDefault(x ast.Expr) (bool, bool) {
	id, ok := field(x, "Default").(*ast.Ident)
	if !ok || (id.Name != "true" && id.Name != "false") {
		return false, false
	}
	return id.Name == "true", true
}

// specVersion reads Version: version.MustParse("1.N") as N.
func specVersion(x ast.Expr) (int, bool) {
	call, ok := field(x, "Version").(*ast.CallExpr)
	if !ok || len(call.Args) != 1 {
		return 0, false
	}
	s, ok := stringLit(call.Args[0])
	if !ok || !strings.HasPrefix(s, "1.") {
		return 0, false
	}
	n, err := strconv.Atoi(strings.TrimPrefix(s, "1."))
	return n, err == nil
}
