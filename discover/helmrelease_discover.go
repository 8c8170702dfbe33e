package discover

import (
	"github.com/kilnhq/kiln/manifest"
)

// renderHelmReleases renders the HelmReleases of the plain files and of
// the rendered units into units of their own, with every object of the
// run that a HelmRelease may name (sources, ConfigMaps, Secrets) as
// context. Files are parsed here only when their marks (one scan per
// discovery, scanMarks) say they may hold such objects, and only when some
// HelmRelease is in the input.
func (res *Result) renderHelmReleases(marks map[string]Marks, opts Options) {
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
		m := marks[f]
		if m&MarkHelmRelease != 0 {
			found = true
		}
		if m&(MarkToolkit|MarkConfig) != 0 {
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
		opts.GitSource = res.gitSource
	}
	hr := RenderHelmReleases(releases, context, opts)
	res.Units = append(res.Units, hr.Units...)
	res.Warnings = append(res.Warnings, hr.Warnings...)
	res.Charts = append(res.Charts, hr.Charts...)
	res.MissingCharts = append(res.MissingCharts, hr.Missing...)
}
