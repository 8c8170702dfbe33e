package settings

import (
	"github.com/kilnhq/kiln/internal/pathkey"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/kilnhq/kiln/discover"
)

// HelmConfig is how charts are rendered: the helm: block of .kiln.yaml
// and the Helm flags.
//
//	helm:
//	  releaseName: shop        # default release-name
//	  namespace: shop          # default default
//	  values: [ci/values.yaml] # over each chart's values.yaml
//	  set: [image.tag=1.2.3]
//	  charts:
//	    charts/app: {values: [charts/app/prod.yaml], set: [replicas=3]}
type HelmConfig struct {
	HelmChart
	// Charts are per chart directory (relative to the config's directory).
	Charts map[string]HelmChart
	// Given are the settings given outside the config (flags): they
	// apply after a chart's own.
	Given HelmChart
}

// HelmChart are the Helm settings of one chart (or the defaults of all).
// Values file paths are as the file system finds them (those of the
// config resolved against its directory).
type HelmChart struct {
	ReleaseName, Namespace string
	Values, Set            []string
}

// Chart returns how the chart in dir is rendered: the defaults, then the
// chart's own entry, then the given ones (values and sets added, names
// replaced), and the setting a user writes them in.
func (s *Settings) Chart(dir string) discover.ChartSettings {
	out := HelmChart{}
	add := func(h HelmChart) {
		out.Values = append(out.Values, h.Values...)
		out.Set = append(out.Set, h.Set...)
		if h.ReleaseName != "" {
			out.ReleaseName = h.ReleaseName
		}
		if h.Namespace != "" {
			out.Namespace = h.Namespace
		}
	}
	add(s.Helm.HelmChart)
	for _, key := range slices.Sorted(maps.Keys(s.Helm.Charts)) {
		if pathkey.Abs(s.relative(key)) == pathkey.Abs(dir) {
			add(s.Helm.Charts[key])
		}
	}
	add(s.Helm.Given)
	return discover.ChartSettings{ReleaseName: out.ReleaseName, Namespace: out.Namespace, ValueFiles: out.Values, Set: out.Set, Setting: s.chartSetting(dir)}
}

// chartSetting names where the settings of the chart in dir are written:
// "helm.charts.<dir>", dir as the config file's directory sees it (as the
// current directory does when there is no config file); "helm" for a
// chart in that directory itself, whose settings are helm's own.
func (s *Settings) chartSetting(dir string) string {
	key := filepath.Clean(dir)
	if s.File != "" {
		if rel, err := filepath.Rel(pathkey.Abs(filepath.Dir(s.File)), pathkey.Abs(dir)); err == nil {
			key = rel
		}
	}
	if key == "." {
		return "helm"
	}
	key = filepath.ToSlash(key)
	if strings.HasPrefix(key, ".") || strings.ContainsAny(key, " :") {
		return "helm.charts[" + strconv.Quote(key) + "]" // "helm.charts.../x" would read as nonsense
	}
	return "helm.charts." + key
}

// relative resolves a path written in the config file against its directory.
func (s *Settings) relative(p string) string {
	if s.File != "" && !filepath.IsAbs(p) {
		return filepath.Join(filepath.Dir(s.File), p)
	}
	return p
}
