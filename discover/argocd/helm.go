package argocd

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/kilnhq/kiln/discover"
	"github.com/kilnhq/kiln/discover/charts"
	"github.com/kilnhq/kiln/internal/pathkey"
	"github.com/kilnhq/kiln/internal/yamlnode"
	"github.com/kilnhq/kiln/manifest"
	"helm.sh/helm/v4/pkg/strvals"
	"sigs.k8s.io/kustomize/kyaml/yaml"
	sigsyaml "sigs.k8s.io/yaml"
)

// sourceNode returns the YAML node of an Application's source i.
func sourceNode(a *app, i int) *yaml.Node {
	spec := yamlnode.Value(a.obj.Node(), "spec")
	if s := yamlnode.Value(spec, "sources"); s != nil && s.Kind == yaml.SequenceNode {
		if i < len(s.Content) {
			return s.Content[i]
		}
		return nil
	}
	return yamlnode.Value(spec, "source")
}

// helmValues are an Application's Helm values as the repo-server hands
// them to helm template: valueFiles, then values or valuesObject (one
// more values file), then parameters (--set, --set-string) and
// fileParameters (--set-file), merged with Helm's own code.
type helmValues struct {
	vals  map[string]any
	given *yaml.Node // the values the Application writes, with their lines
	read  map[string]bool
}

var unescapedComma = regexp.MustCompile(`([^\\]),`)

// values assembles a source's Helm values; dir is the chart's folder (nil
// for a chart of the cache: value files are then $ref ones only).
func (r *run) values(a *app, srcs []source, i int, dir string) (*helmValues, error) {
	s := &srcs[i]
	h := s.Helm
	out := &helmValues{vals: map[string]any{}, read: map[string]bool{}}
	if h == nil {
		return out, nil
	}
	if err := r.valueFiles(a, srcs, dir, h, out); err != nil {
		return nil, err
	}
	node := sourceNode(a, i)
	if len(s.overrides) > 0 {
		node = nil // merged from .argocd-source files: not all at the Application's lines
	}
	helmNode := yamlnode.Value(node, "helm")
	given := &yaml.Node{Kind: yaml.SequenceNode}
	if err := inlineValues(h, helmNode, out, given); err != nil {
		return nil, err
	}
	if err := parameters(h, helmNode, out, given); err != nil {
		return nil, err
	}
	if err := r.fileParameters(srcs, dir, h, out); err != nil {
		return nil, err
	}
	if len(given.Content) > 0 {
		out.given = given
	}
	return out, nil
}

// valueFiles merges the valueFiles in order.
func (r *run) valueFiles(a *app, srcs []source, dir string, h *helmSpec, out *helmValues) error {
	for _, vf := range h.ValueFiles {
		path, err := r.valueFile(srcs, dir, vf)
		if err != nil {
			return err
		}
		if path == "" {
			r.warn(a, "values file %s is a URL, which kiln never fetches; it is left out", vf)
			continue
		}
		data, err := os.ReadFile(path)
		if err != nil {
			if os.IsNotExist(err) && h.IgnoreMissingValueFiles {
				continue
			}
			return fmt.Errorf("values file %s: %v", vf, manifest.PathErr(err))
		}
		out.read[pathkey.Real(path)] = true
		m := map[string]any{}
		if err := sigsyaml.Unmarshal(data, &m); err != nil {
			return fmt.Errorf("values file %s: %v", vf, err)
		}
		out.vals = discover.MergeValues(out.vals, m)
	}
	return nil
}

// inlineValues merges valuesObject, or else values, over the value
// files; the Application's node of them goes into given.
func inlineValues(h *helmSpec, helmNode *yaml.Node, out *helmValues, given *yaml.Node) error {
	if len(h.ValuesObject) > 0 && string(h.ValuesObject) != "null" {
		m := map[string]any{}
		if err := json.Unmarshal(h.ValuesObject, &m); err != nil {
			return fmt.Errorf("helm.valuesObject: %v", err)
		}
		out.vals = discover.MergeValues(out.vals, m)
		if n := yamlnode.Value(helmNode, "valuesObject"); n != nil {
			given.Content = append(given.Content, n)
		}
	} else if strings.TrimSpace(h.Values) != "" {
		m := map[string]any{}
		if err := sigsyaml.Unmarshal([]byte(h.Values), &m); err != nil {
			return fmt.Errorf("helm.values: %v", err)
		}
		out.vals = discover.MergeValues(out.vals, m)
		if n := yamlnode.Value(helmNode, "values"); n != nil {
			given.Content = append(given.Content, blockValues(n, h.Values))
		}
	}
	return nil
}

// parameters sets the parameters (--set, then --set-string for those
// with forceString), unescaped commas escaped as Argo CD does; each
// parameter's node goes into given.
func parameters(h *helmSpec, helmNode *yaml.Node, out *helmValues, given *yaml.Node) error {
	params := yamlnode.Value(helmNode, "parameters")
	var setString []string
	for j, p := range h.Parameters {
		expr := p.Name + "=" + unescapedComma.ReplaceAllString(p.Value, `$1\,`)
		if p.ForceString {
			setString = append(setString, expr)
		} else if err := strvals.ParseInto(expr, out.vals); err != nil {
			return fmt.Errorf("helm.parameters %s: %v", p.Name, err)
		}
		if params != nil && j < len(params.Content) {
			given.Content = append(given.Content, paramNode(params.Content[j], p.Name, p.Value))
		}
	}
	for _, expr := range setString {
		if err := strvals.ParseIntoString(expr, out.vals); err != nil {
			return fmt.Errorf("helm.parameters %s: %v", expr, err)
		}
	}
	return nil
}

// fileParameters sets the fileParameters (--set-file).
func (r *run) fileParameters(srcs []source, dir string, h *helmSpec, out *helmValues) error {
	for _, fp := range h.FileParameters {
		path, err := r.valueFile(srcs, dir, fp.Path)
		if err != nil || path == "" {
			return fmt.Errorf("helm.fileParameters %s: %s is not a file of this repository", fp.Name, fp.Path)
		}
		out.read[pathkey.Real(path)] = true
		reader := func(rs []rune) (any, error) {
			data, err := os.ReadFile(path)
			return string(data), err
		}
		if err := strvals.ParseIntoFile(fp.Name+"="+path, out.vals, reader); err != nil {
			return fmt.Errorf("helm.fileParameters %s: %v", fp.Name, err)
		}
	}
	return nil
}

// valueFile resolves a values file as the repo-server does: "$ref/path"
// in the source whose ref is ref, an absolute path from the repository's
// root, others from the chart's folder; "" for a URL.
func (r *run) valueFile(srcs []source, dir, vf string) (string, error) {
	if strings.HasPrefix(vf, "http://") || strings.HasPrefix(vf, "https://") {
		return "", nil
	}
	if strings.HasPrefix(vf, "$") {
		ref, rest, _ := strings.Cut(vf[1:], "/")
		for _, s := range srcs {
			if s.Ref == ref {
				if !r.repo.is(s.RepoURL) {
					return "", fmt.Errorf("values file %s: source %s is not this repository (kiln reads this repository's files only)", vf, s.RepoURL)
				}
				return r.within(filepath.Join(r.repo.root, filepath.FromSlash(rest)), vf)
			}
		}
		return "", fmt.Errorf("values file %s: no source has ref %q", vf, ref)
	}
	if dir == "" {
		return "", fmt.Errorf("values file %s of a chart from a Helm repository: write it $ref/... from a source of this repository", vf)
	}
	if filepath.IsAbs(vf) {
		return r.within(filepath.Join(r.repo.root, vf), vf)
	}
	return r.within(filepath.Join(dir, filepath.FromSlash(vf)), vf)
}

// within refuses a path outside the repository, as the repo-server does.
func (r *run) within(p, named string) (string, error) {
	if rel, err := filepath.Rel(pathkey.Real(r.repo.root), pathkey.Real(p)); err != nil || strings.HasPrefix(rel, "..") {
		return "", fmt.Errorf("values file %s is outside the repository", named)
	}
	return p, nil
}

// paramNode is a `key: value` mapping for a parameter, at its lines:
// key is the last part of its name (a.b[0].c: c).
func paramNode(item *yaml.Node, name, value string) *yaml.Node {
	key := name
	if i := strings.LastIndex(key, "."); i >= 0 {
		key = key[i+1:]
	}
	if i := strings.Index(key, "["); i >= 0 {
		key = key[:i]
	}
	at := item
	if v := yamlnode.Value(item, "value"); v != nil {
		at = v
	}
	k := &yaml.Node{Kind: yaml.ScalarNode, Value: key, Line: at.Line, Column: at.Column}
	v := &yaml.Node{Kind: yaml.ScalarNode, Value: value, Line: at.Line, Column: at.Column}
	return &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{k, v}}
}

// blockValues parses helm.values (a string) with its lines counted from
// the line after the key, as a block scalar is written.
func blockValues(n *yaml.Node, text string) *yaml.Node {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
		return &yaml.Node{}
	}
	indent := n.Column + 1
	var shift func(x *yaml.Node)
	shift = func(x *yaml.Node) {
		if x.Line > 0 {
			x.Line += n.Line
			x.Column += indent
		}
		for _, c := range x.Content {
			shift(c)
		}
	}
	shift(&doc)
	return &doc
}

// kubeVersion reads helm.kubeVersion ("1.29", "v1.29.3").
func kubeVersion(s string) (manifest.KubeVersion, error) {
	v := strings.TrimPrefix(strings.TrimSpace(s), "v")
	maj, rest, ok := strings.Cut(v, ".")
	if !ok {
		return manifest.KubeVersion{}, fmt.Errorf("helm.kubeVersion %q is not a Kubernetes version", s)
	}
	min, _, _ := strings.Cut(rest, ".")
	m, err1 := strconv.Atoi(maj)
	n, err2 := strconv.Atoi(min)
	if err1 != nil || err2 != nil {
		return manifest.KubeVersion{}, fmt.Errorf("helm.kubeVersion %q is not a Kubernetes version", s)
	}
	return manifest.KubeVersion{Major: m, Minor: n}, nil
}

// renderHelm renders a chart of this repository.
func (r *run) renderHelm(a *app, srcs []source, i int, dir, name string) *discover.Unit {
	return r.helm(a, srcs, i, name, discover.ChartRequest{Dir: dir})
}

// renderChartSource renders a chart of a Helm or OCI repository from
// kiln's chart cache.
func (r *run) renderChartSource(a *app, srcs []source, i int, name string) *discover.Unit {
	s := &srcs[i]
	var src charts.Source
	switch {
	case strings.HasPrefix(s.RepoURL, "oci://"):
		src = charts.Source{Type: "oci", URL: strings.TrimSuffix(s.RepoURL, "/") + "/" + s.Chart, Version: s.TargetRevision}
	case strings.Contains(s.RepoURL, "://"):
		src = charts.Source{Type: "http", URL: s.RepoURL, Chart: s.Chart, Version: s.TargetRevision}
	default:
		// Argo CD's OCI Helm repositories are written without a scheme.
		src = charts.Source{Type: "oci", URL: "oci://" + strings.TrimSuffix(s.RepoURL, "/") + "/" + s.Chart, Version: s.TargetRevision}
	}
	return r.helm(a, srcs, i, name, discover.ChartRequest{Source: src})
}

// helm renders a Helm source with the Application's values, release name
// and namespace, capabilities and CRD choice, as the repo-server does.
func (r *run) helm(a *app, srcs []source, i int, name string, req discover.ChartRequest) *discover.Unit {
	s := &srcs[i]
	hv, err := r.values(a, srcs, i, req.Dir)
	if err != nil {
		return r.failed(a, name, err.Error())
	}
	dest := a.spec.Spec.Destination.Namespace
	req.ReleaseName, req.Namespace = a.name(), dest
	if h := s.Helm; h != nil {
		if h.ReleaseName != "" {
			req.ReleaseName = h.ReleaseName
		}
		if h.Namespace != "" {
			req.Namespace = h.Namespace
		}
		req.SkipCRDs, req.APIVersions = h.SkipCrds, h.APIVersions
		if h.KubeVersion != "" {
			kv, err := kubeVersion(h.KubeVersion)
			if err != nil {
				return r.failed(a, name, err.Error())
			}
			req.KubeVersion = kv
		}
	}
	req.Values, req.Unit, req.Name, req.Pos = hv.vals, name, "Application "+a.name(), a.obj.Pos()
	req.Given, req.GivenFile = hv.given, a.obj.File
	req.Edit = func(n *yaml.Node) { setNamespace(n, dest) }
	out := r.in.RenderChart(req)
	r.out.Charts = append(r.out.Charts, out.Charts...)
	r.out.MissingCharts = append(r.out.MissingCharts, out.Missing...)
	r.out.Warnings = append(r.out.Warnings, out.Warnings...)
	if len(out.Missing) > 0 {
		var names []string
		for _, m := range out.Missing {
			names = append(names, m.String())
		}
		r.warn(a, "chart %s is not in kiln's chart cache: run `kiln fetch` (kiln lint never downloads); it is not rendered", strings.Join(names, ", "))
		r.consume(out.Read)
		return nil
	}
	r.consume(out.Read)
	r.consume(hv.read)
	return &discover.Unit{Kind: UnitKind, Dir: name, Source: out.Source}
}
