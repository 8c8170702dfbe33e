package discover

import (
	"bytes"
	"os"
	"path/filepath"

	"github.com/kilnhq/kiln/manifest"
)

// renderHelmReleases renders the HelmReleases of the plain files and of
// the rendered units into units of their own, with every object of the
// run that a HelmRelease may name (sources, ConfigMaps, Secrets) as
// context. Files are parsed here only when they may hold such objects,
// and only when some HelmRelease is in the input.
func (res *Result) renderHelmReleases(paths []string, opts Options) {
	var releases, context []*manifest.Object
	for _, u := range res.Units {
		for _, o := range u.Source.Objects {
			context = append(context, o)
			if IsHelmRelease(o) {
				releases = append(releases, o)
			}
		}
	}
	var candidates []string
	found := len(releases) > 0
	for _, f := range res.Files {
		if f == manifest.Stdin {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if bytes.Contains(data, []byte("helm.toolkit.fluxcd.io")) {
			found = true
		}
		if bytes.Contains(data, []byte("toolkit.fluxcd.io")) || bytes.Contains(data, []byte("ConfigMap")) || bytes.Contains(data, []byte("Secret")) {
			candidates = append(candidates, f)
		}
	}
	if !found {
		return
	}
	for _, f := range candidates {
		src := manifest.ReadFile(f, nil)
		for _, o := range src.Objects {
			context = append(context, o)
			if IsHelmRelease(o) {
				releases = append(releases, o)
			}
		}
	}
	if opts.GitSource == nil {
		opts.GitSource = oneGitSource(paths, context)
	}
	hr := RenderHelmReleases(releases, context, opts)
	res.Units = append(res.Units, hr.Units...)
	res.Warnings = append(res.Warnings, hr.Warnings...)
	res.Charts = append(res.Charts, hr.Charts...)
	res.MissingCharts = append(res.MissingCharts, hr.Missing...)
}

// oneGitSource takes the input's one GitRepository, if it declares
// exactly one, to be the repository the input is in (its root: the
// nearest directory above the first path that holds .git, else that
// path).
func oneGitSource(paths []string, context []*manifest.Object) func(string, string) (string, bool) {
	var git []*manifest.Object
	for _, o := range context {
		if o.Kind == "GitRepository" {
			git = append(git, o)
		}
	}
	if len(git) != 1 || len(paths) == 0 {
		return func(string, string) (string, bool) { return "", false }
	}
	root := GitRoot(paths[0])
	if root == "" {
		root = paths[0]
		if st, err := os.Stat(root); err == nil && !st.IsDir() {
			root = filepath.Dir(root)
		}
	}
	name, ns := git[0].Name, git[0].Namespace
	return func(namespace, n string) (string, bool) {
		return root, n == name && (ns == "" || ns == namespace)
	}
}
