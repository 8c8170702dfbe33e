package discover

import (
	chart "helm.sh/helm/v4/pkg/chart/v2"
)

// chartCopy returns a copy of a parsed chart that one release's rendering
// may change, sharing what rendering only reads (templates, files, the
// schema). Helm's ProcessDependencies changes the chart it renders: it
// keeps only the subcharts the values enable (on the chart and on its
// metadata's dependencies) and merges imported values into the values.
func chartCopy(ch *chart.Chart) *chart.Chart {
	if ch == nil {
		return nil
	}
	c := *ch
	if ch.Metadata != nil {
		md := *ch.Metadata
		if ch.Metadata.Dependencies != nil {
			md.Dependencies = make([]*chart.Dependency, len(ch.Metadata.Dependencies))
			for i, d := range ch.Metadata.Dependencies {
				if d != nil {
					dd := *d
					dd.Tags = append([]string(nil), d.Tags...)
					dd.ImportValues = append([]any(nil), d.ImportValues...)
					d = &dd
				}
				md.Dependencies[i] = d
			}
		}
		c.Metadata = &md
	}
	c.Values = copyValue(ch.Values).(map[string]any)
	deps := ch.Dependencies()
	copies := make([]*chart.Chart, len(deps))
	for i, d := range deps {
		copies[i] = chartCopy(d)
	}
	c.SetDependencies(copies...)
	return &c
}

// copyValue copies the maps and lists of a decoded value.
func copyValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		if x == nil {
			return map[string]any(nil)
		}
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = copyValue(e)
		}
		return m
	case []any:
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = copyValue(e)
		}
		return l
	}
	return v
}
