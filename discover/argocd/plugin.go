package argocd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/kilnhq/kiln/compiler"
	"github.com/kilnhq/kiln/discover"
	"github.com/kilnhq/kiln/internal/pathkey"
	"github.com/kilnhq/kiln/manifest"
)

// PluginName is the name of kiln's config management plugin
// (examples/argocd/plugin.yaml's metadata.name): an Application source
// with `plugin: {name: kiln}` (or kiln-<version>, Argo CD's
// <metadata.name>-<spec.version>) is rendered as `kiln argocd generate`
// renders it.
const PluginName = "kiln"

// Plugin is what Argo CD tells a config management plugin of the
// Application it generates for (its CMP environment), or what lint reads
// of the Application itself: the same values either way.
type Plugin struct {
	// App is the Application's name (ARGOCD_APP_NAME); Namespace its
	// destination namespace (ARGOCD_APP_NAMESPACE).
	App, Namespace string
	// Env is the Application's spec.source.plugin.env, by name (Argo CD
	// hands each over as ARGOCD_ENV_<name>).
	Env map[string]string
	// Parameters are spec.source.plugin.parameters (Argo CD hands them
	// over as the JSON of ARGOCD_APP_PARAMETERS).
	Parameters []PluginParameter
}

// PluginParameter is one of spec.source.plugin.parameters, as Argo CD
// writes it into ARGOCD_APP_PARAMETERS.
type PluginParameter struct {
	Name   string            `json:"name"`
	String *string           `json:"string,omitempty"`
	Array  []string          `json:"array,omitempty"`
	Map    map[string]string `json:"map,omitempty"`
}

// pluginEnvPrefix is what Argo CD puts before each plugin env name.
const pluginEnvPrefix = "ARGOCD_ENV_"

// PluginFromEnv reads the Application a plugin generates for from Argo
// CD's CMP environment (ARGOCD_APP_NAME, ARGOCD_APP_NAMESPACE,
// ARGOCD_ENV_*, ARGOCD_APP_PARAMETERS).
func PluginFromEnv(getenv func(string) (string, bool), environ []string) (*Plugin, error) {
	p := &Plugin{Env: map[string]string{}}
	p.App, _ = getenv("ARGOCD_APP_NAME")
	p.Namespace, _ = getenv("ARGOCD_APP_NAMESPACE")
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if rest, ok := strings.CutPrefix(name, pluginEnvPrefix); ok && rest != "" {
			p.Env[rest], _ = getenv(name)
		}
	}
	if raw, ok := getenv("ARGOCD_APP_PARAMETERS"); ok && strings.TrimSpace(raw) != "" {
		if err := json.Unmarshal([]byte(raw), &p.Parameters); err != nil {
			return nil, fmt.Errorf("ARGOCD_APP_PARAMETERS: not a JSON list of parameters: %v", err)
		}
	}
	return p, nil
}

// pluginOf is the Plugin an Application's source hands kiln's plugin:
// its env values with $ARGOCD_APP_* substituted, as the repo-server
// substitutes them (getPluginParamEnvs, Env.Envsubst).
func pluginOf(a *app, s *source) *Plugin {
	p := &Plugin{App: a.name(), Namespace: a.spec.Spec.Destination.Namespace, Env: map[string]string{}}
	build := map[string]string{
		"ARGOCD_APP_NAME": p.App, "ARGOCD_APP_NAMESPACE": p.Namespace,
		"ARGOCD_APP_SOURCE_REPO_URL": s.RepoURL, "ARGOCD_APP_SOURCE_PATH": s.Path,
		"ARGOCD_APP_SOURCE_TARGET_REVISION": s.TargetRevision,
	}
	if s.Plugin != nil {
		for _, e := range s.Plugin.Env {
			p.Env[e.Name] = os.Expand(e.Value, func(k string) string {
				if k == "$" {
					return "$" // $$ is a $ (Env.Envsubst)
				}
				return build[k]
			})
		}
		p.Parameters = s.Plugin.Parameters
	}
	return p
}

// namespace is the namespace kiln's plugin gives objects without one:
// the `namespace` parameter, else the KILN_NAMESPACE env, else the
// destination namespace (session/settings.FromArgo's order).
func (p *Plugin) namespace() string {
	ns := p.Namespace
	if v, ok := p.Env["KILN_NAMESPACE"]; ok {
		ns = v
	}
	for _, q := range p.Parameters {
		if q.Name == "namespace" && q.String != nil {
			ns = *q.String
		}
	}
	return ns
}

// PluginRequest is one run of kiln's plugin's generate.
type PluginRequest struct {
	// Dir is the Application's path, as the plugin is run in it.
	Dir string
	// Plugin is the Application it renders for.
	Plugin *Plugin
	// Namespace is the namespace of objects without one when the
	// Application gives none (a setting of .kiln.yaml).
	Namespace string
	// SyncWaves annotates the compiled objects with Argo CD sync waves
	// (generate's default; --no-sync-waves leaves them out).
	SyncWaves bool
	// Excluded leaves files out (.kiln.yaml's exclude); nil: none.
	Excluded func(string) bool
	// Stdin is read for a Dir of "-".
	Stdin io.Reader
}

// PluginRendered is what kiln's plugin generates for a PluginRequest.
type PluginRendered struct {
	// Source holds the objects (the App specs compiled, the namespace
	// set) and the input problems (files that do not parse, specs that
	// do not compile).
	Source *manifest.Source
	// Files are the files read, in order, with their objects before
	// compiling (for the reports).
	Files []*manifest.Source
	// Warnings are the compiler's.
	Warnings []error
}

// RenderPlugin renders a directory as kiln's config management plugin
// generates it (`kiln argocd generate`, and lint for a source of kiln's
// plugin): every manifest file of the directory as discovery's plain
// mode finds them (hidden files and kustomization files are not read),
// the namespace put on namespaced objects and App specs that have none,
// the App specs compiled (with sync waves, unless asked not to).
func RenderPlugin(req PluginRequest) *PluginRendered {
	found := discover.Discover([]string{req.Dir}, discover.Options{Plain: true, Excluded: req.Excluded})
	out := &PluginRendered{Source: &manifest.Source{Path: req.Dir}}
	out.Source.Errs = append(out.Source.Errs, found.Errs...)
	var objs []*manifest.Object
	for _, f := range found.Files {
		src := manifest.ReadFile(f, req.Stdin)
		out.Files = append(out.Files, src)
		out.Source.Errs = append(out.Source.Errs, src.Errs...)
		objs = append(objs, src.Objects...)
	}
	ns := req.Namespace
	if req.Plugin != nil {
		if n := req.Plugin.namespace(); n != "" {
			ns = n
		}
	}
	x, err := compiler.ExpandIn(objs, ns)
	if err != nil {
		out.Source.Errs = append(out.Source.Errs, err)
		return out
	}
	if req.SyncWaves {
		if err := x.AddSyncWaves(); err != nil {
			out.Source.Errs = append(out.Source.Errs, err)
			return out
		}
	}
	out.Source.Errs = append(out.Source.Errs, x.Errors...)
	out.Source.Objects, out.Warnings = x.All, x.Warnings
	return out
}

// isKilnPlugin reports whether a source is rendered by kiln's plugin: it
// names it, or it names a plugin without a name (Argo CD then asks each
// plugin's discover) or no tool at all (Argo CD asks the plugins before
// it looks for a chart or a kustomization) and kiln's discover claims
// the path.
func isKilnPlugin(s *source, typ, dir string) bool {
	switch {
	case typ == "Plugin" && s.Plugin.Name != "":
		return s.Plugin.Name == PluginName || strings.HasPrefix(s.Plugin.Name, PluginName+"-")
	case typ == "Plugin" || typ == "":
		return claimed(dir)
	}
	return false
}

// specLine and appLine are what kiln's plugin's discover command greps
// for (examples/argocd/plugin.yaml): a kiln.dev apiVersion and kind App.
var (
	specLine = regexp.MustCompile(`(?m)^apiVersion:[[:space:]]*["']?kiln\.dev/`)
	appLine  = regexp.MustCompile(`(?m)^kind:[[:space:]]*["']?App["']?[[:space:]]*(#.*)?$`)
)

// claimed is kiln's plugin's discover command: the directory holds no
// kustomization and a *.yaml or *.yml file (hidden ones and those in
// hidden folders not searched) with a kiln.dev apiVersion and kind App.
func claimed(dir string) bool {
	for _, k := range []string{"kustomization.yaml", "kustomization.yml", "Kustomization"} {
		if _, err := os.Stat(filepath.Join(dir, k)); err == nil {
			return false
		}
	}
	found := false
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if found {
			return filepath.SkipAll
		}
		if err != nil {
			return nil
		}
		if p != dir && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() || (filepath.Ext(p) != ".yaml" && filepath.Ext(p) != ".yml") {
			return nil
		}
		data, err := os.ReadFile(p)
		if err == nil && bytes.Contains(data, []byte("kiln.dev/")) && specLine.Match(data) && appLine.Match(data) {
			found = true
		}
		return nil
	})
	return found
}

// renderKilnPlugin renders a source of kiln's plugin as `kiln argocd
// generate` does for the Application (RenderPlugin).
func (r *run) renderKilnPlugin(a *app, s *source, dir, name string) *discover.Unit {
	p := pluginOf(a, s)
	out := RenderPlugin(PluginRequest{Dir: dir, Plugin: p, SyncWaves: true, Excluded: r.c.Excluded})
	r.cur.Plugins = append(r.cur.Plugins, PluginRun{Dir: dir, Path: s.Path, RepoURL: s.RepoURL, Plugin: p, Objects: out.Source.Objects})
	for _, f := range out.Files {
		r.out.Consumed[pathkey.Real(f.Path)] = true
	}
	if k := discover.KustomizationFile(dir); k != "" {
		// The plugin does not read it, and Argo CD deploys what the
		// plugin renders for the path: its kustomization is not built.
		r.out.Consumed[pathkey.Real(k)] = true
	}
	r.out.Warnings = append(r.out.Warnings, out.Warnings...)
	for _, o := range out.Source.Objects {
		o.Unit = name
	}
	out.Source.Path = dir
	return &discover.Unit{Kind: UnitKind, Dir: name, Source: out.Source}
}
