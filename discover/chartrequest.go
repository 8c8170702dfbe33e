package discover

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/kilnhq/kiln/discover/charts"
	"github.com/kilnhq/kiln/internal/pathkey"
	"github.com/kilnhq/kiln/manifest"
	"helm.sh/helm/v4/pkg/chart/common"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// ChartRequest is one chart a Controller renders with values of its own
// (an Argo CD Application's Helm source), with discovery's Helm engine.
type ChartRequest struct {
	// Dir is the chart's directory in the input; Source, when Dir is "",
	// a chart of kiln's chart cache (never the network).
	Dir    string
	Source charts.Source
	// Values are merged over the chart's values.yaml.
	Values map[string]any
	// ReleaseName and Namespace are the release's ("": the chart's name
	// is not assumed; "release-name" and "default", as helm template).
	ReleaseName, Namespace string
	// KubeVersion is the cluster's version (zero: discovery's);
	// APIVersions are added to the API versions Helm reports.
	KubeVersion manifest.KubeVersion
	APIVersions []string
	// SkipCRDs leaves the chart's crds/ out.
	SkipCRDs bool
	// Unit names the unit the objects belong to.
	Unit string
	// Name names the asker in messages ("Application guestbook"); Pos is
	// where a problem of the whole chart is reported.
	Name string
	Pos  manifest.Position
	// Given are the values the asker wrote itself, as a mapping whose
	// scalar `key: value` pairs have the lines where it set them, in
	// GivenFile: an object with a pair one of them sets exactly is placed
	// there (a privileged container set by a parameter is reported at the
	// parameter), its other nodes at their nearest such parent, else at
	// Pos. A chart of the cache is placed so whole.
	Given     *yaml.Node
	GivenFile string
	// Edit changes each object's tree (crds/ aside) before it is made an
	// object.
	Edit func(*yaml.Node)
}

// ChartRendered is what a ChartRequest rendered.
type ChartRendered struct {
	// Source holds the objects and the problems rendering found.
	Source *manifest.Source
	// Read are the absolute paths of the chart's files (Dir's).
	Read map[string]bool
	// Warnings are what rendering could not do offline (notes of the
	// values' schema check).
	Warnings []error
	// Charts are the cache's charts the request needed (the chart
	// source, dependencies a Chart.yaml names from a repository), and
	// Missing those the cache lacks: then nothing was rendered, and
	// Source holds no error (the asker says so).
	Charts, Missing []charts.Source
}

// renderRequest renders a ChartRequest with discovery's options.
func renderRequest(req ChartRequest, opts Options) *ChartRendered {
	// What Helm logs goes to the capture runControllers holds.
	out := &ChartRendered{Read: map[string]bool{}}
	src := &manifest.Source{Path: req.Pos.File}
	out.Source = src
	cache := opts.Charts
	if cache == nil {
		if c, err := charts.Open(""); err == nil {
			cache = c
		}
	}
	ld := &requestCharts{cache: cache, out: out}
	ch, err := ld.chart(req)
	if err != nil {
		src.Errs = append(src.Errs, &manifest.Error{Pos: req.Pos, Msg: req.Name + ": " + err.Error()})
		return out
	}
	if len(out.Missing) > 0 {
		return out
	}
	renderLoaded(src, requestRender(req, opts.KubeVersion, ch, out))
	return out
}

// requestCharts loads a request's chart and its dependencies, from the
// input's directory or the chart cache, noting in out every chart source
// asked for and those the cache lacks.
type requestCharts struct {
	cache *charts.Cache
	out   *ChartRendered
}

// chart loads the request's chart: its directory with the dependencies
// charts/ lacks from the cache, or its source from the cache. A chart the
// cache lacks is nil with no error (out.Missing names it).
func (l *requestCharts) chart(req ChartRequest) (*chart.Chart, error) {
	if req.Dir == "" {
		ch, ok, err := l.load(req.Source)
		if err != nil || !ok {
			return ch, err
		}
		if missing := resolveDependencies(ch, ""); len(missing) > 0 {
			return nil, fmt.Errorf("chart %s needs dependency %q, which its archive does not hold", req.Source, missing[0].name)
		}
		return ch, nil
	}
	ch, err := loader.LoadDir(req.Dir)
	if err != nil {
		return nil, fmt.Errorf("cannot load the Helm chart %s: %v", req.Dir, err)
	}
	_ = filepath.WalkDir(req.Dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			l.out.Read[pathkey.Real(p)] = true
		}
		return nil
	})
	for _, m := range resolveDependencies(ch, req.Dir) {
		// As the repo-server runs `helm dependency build`: the
		// dependency from the cache, which `kiln fetch` fills.
		d := dependencyOf(ch, m.name)
		if d == nil || d.Repository == "" {
			return nil, fmt.Errorf("chart %q needs dependency %q, which is not in charts/ and names no repository", ch.Name(), m.name)
		}
		sub, ok, err := l.load(dependencySource(d))
		if err != nil {
			return nil, fmt.Errorf("chart %q dependency %q: %v", ch.Name(), m.name, err)
		}
		if ok {
			ch.AddDependency(sub)
		}
	}
	return ch, nil
}

// load reads chart source s from the cache; ok is false when the cache
// lacks it.
func (l *requestCharts) load(s charts.Source) (*chart.Chart, bool, error) {
	l.out.Charts = append(l.out.Charts, s)
	if l.cache == nil {
		l.out.Missing = append(l.out.Missing, s)
		return nil, false, nil
	}
	c, err := l.cache.Lookup(s)
	if err != nil {
		if charts.IsNotCached(err) {
			l.out.Missing = append(l.out.Missing, s)
			return nil, false, nil
		}
		return nil, false, err
	}
	data, err := os.ReadFile(c.Path)
	if err != nil {
		return nil, false, err
	}
	ch, err := loader.LoadArchive(bytes.NewReader(data))
	if err != nil {
		return nil, false, fmt.Errorf("chart %s version %s: %v", s, c.Version, err)
	}
	return ch, true, nil
}

// requestRender is how the request's chart ch renders, its warnings noted
// in out: its release, the target version (the request's, else the run's kube), its values traced to
// where they were given, and its output placed in the chart's templates
// (a chart of the input) or at the request (a chart from the cache).
func requestRender(req ChartRequest, kube manifest.KubeVersion, ch *chart.Chart, out *ChartRendered) chartRender {
	pos := req.Pos
	rel := common.ReleaseOptions{Name: orDefault(req.ReleaseName, "release-name"), Namespace: orDefault(req.Namespace, "default"), Revision: 1, IsInstall: true}
	if req.KubeVersion.Major != 0 {
		kube = req.KubeVersion
	}
	cr := chartRender{
		ch: ch, vals: req.Values, rel: rel, kube: kube, crds: !req.SkipCRDs, unit: req.Unit, pos: pos,
		notes: &out.Warnings, apiVersions: req.APIVersions,
		valuesErr: func(err error) error {
			return &manifest.Error{Pos: pos, Msg: req.Name + ": its values do not meet the chart's values.schema.json (" + strings.Join(violations(ch, err), "; ") + ")"}
		},
		templateErr: func(err error) error {
			return &manifest.Error{Pos: pos, Msg: req.Name + ": chart " + strconv.Quote(ch.Name()) + " cannot render: " + strings.TrimSpace(err.Error())}
		},
	}
	if req.Edit != nil {
		cr.edit = []func(*yaml.Node){req.Edit}
	}
	trace := newValueTrace(req.Given)
	if req.Dir != "" {
		cr.crdFile = func(name string) string { return diskPath(req.Dir, name) }
		cr.place = func(name, text string) (string, func(*yaml.Node)) {
			lines := traceLines(text, templateOf(ch, name))
			return diskPath(req.Dir, name), func(n *yaml.Node) { mapLines(n, lines) }
		}
		if req.Given != nil && req.GivenFile != "" {
			cr.given, cr.givenFile, cr.givenPos = trace, req.GivenFile, pos
		}
	} else {
		file := orDefault(req.GivenFile, pos.File)
		cr.crdFile = func(string) string { return file }
		cr.place = func(string, string) (string, func(*yaml.Node)) {
			return file, func(n *yaml.Node) { trace.place(n, pos) }
		}
	}
	return cr
}

// dependencyOf returns the dependency of ch's Chart.yaml named name.
func dependencyOf(ch *chart.Chart, name string) *chart.Dependency {
	for _, d := range ch.Metadata.Dependencies {
		if d.Name == name {
			return d
		}
	}
	return nil
}

// dependencySource is the cache's source of a chart dependency
// (`helm dependency build`: an HTTP repository's chart, or an OCI one).
func dependencySource(d *chart.Dependency) charts.Source {
	if strings.HasPrefix(d.Repository, "oci://") {
		return charts.Source{Type: "oci", URL: strings.TrimSuffix(d.Repository, "/") + "/" + d.Name, Version: d.Version}
	}
	return charts.Source{Type: "http", URL: d.Repository, Chart: d.Name, Version: d.Version}
}

// IsChartDir reports whether dir holds a Chart.yaml (the repo-server
// renders such a directory with Helm).
func IsChartDir(dir string) bool { return isChartDir(dir) }

// KustomizationFile returns the kustomization file in dir, or "".
func KustomizationFile(dir string) string { return kustomizationFile(dir) }

// MergeValues merges b into a as Helm merges values files (maps deeply,
// everything else replaced), into a new map.
func MergeValues(a, b map[string]any) map[string]any { return mergeMaps(a, b) }
