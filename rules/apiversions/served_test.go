package apiversions

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kilnhq/kiln/admit/servedversions"
	"github.com/kilnhq/kiln/manifest"
)

// TestTableMatchesServedVersions: apis.yaml and the served-versions table
// generated from the Kubernetes sources (admit/servedversions) agree.
// Every entry removed within kiln's range stops being served at its
// removal (the last minor that serves it, or that has it, is the one
// before), and every version the table stops serving by default before
// the newest minor is in apis.yaml with that removal, so that api/removed
// reports it. An entry whose removal is still to come exists at the newest minor.
func TestTableMatchesServedVersions(t *testing.T) {
	for _, problem := range disagreements(Table(), servedversions.Table()) {
		t.Error(problem)
	}
}

// disagreements lists where apis.yaml and the served-versions table differ.
func disagreements(apis []API, served []servedversions.Entry) []string {
	var out []string
	listed := map[[2]string]API{}
	for _, a := range apis {
		listed[[2]string{a.APIVersion, a.Kind}] = a
	}
	byKey := map[[2]string]servedversions.Entry{}
	for _, e := range served {
		byKey[[2]string{e.APIVersion(), e.Kind}] = e
	}
	oldest, newest := manifest.OldestKube.Minor, manifest.LatestKube.Minor
	for _, a := range apis {
		e, ok := byKey[[2]string{a.APIVersion, a.Kind}]
		removed := a.Removed.Minor
		switch {
		case a.Removed == (manifest.KubeVersion{}) || removed > newest:
			if !ok || e.Exists.To != newest {
				out = append(out, fmt.Sprintf("%s %s: apis.yaml schedules its removal after %s, but Kubernetes %s does not have it", a.APIVersion, a.Kind, manifest.LatestKube, manifest.LatestKube))
			}
		case removed <= oldest:
			if ok && !e.Served.Empty() {
				out = append(out, fmt.Sprintf("%s %s: apis.yaml says removed in %s, but the table serves it in 1.%d-1.%d", a.APIVersion, a.Kind, a.Removed, e.Served.From, e.Served.To))
			}
		case !ok:
			out = append(out, fmt.Sprintf("%s %s: apis.yaml says removed in %s, but no release from %s has it", a.APIVersion, a.Kind, a.Removed, manifest.OldestKube))
		case !e.Served.Empty() && e.Served.To+1 != removed:
			out = append(out, fmt.Sprintf("%s %s: apis.yaml says removed in %s, the table serves it up to 1.%d", a.APIVersion, a.Kind, a.Removed, e.Served.To))
		case e.Served.Empty() && e.Exists.To+1 != removed:
			out = append(out, fmt.Sprintf("%s %s: apis.yaml says removed in %s, the table has it (off by default) up to 1.%d", a.APIVersion, a.Kind, a.Removed, e.Exists.To))
		}
	}
	for _, e := range served {
		if e.Served.Empty() || e.Served.To == newest {
			continue
		}
		if _, ok := listed[[2]string{e.APIVersion(), e.Kind}]; !ok {
			out = append(out, fmt.Sprintf("%s %s: served by default up to 1.%d, then no longer, and apis.yaml does not list it (api/removed would not report it)", e.APIVersion(), e.Kind, e.Served.To))
		}
	}
	return out
}

// TestDisagreements: each way apis.yaml and the table can differ is found.
func TestDisagreements(t *testing.T) {
	v := func(minor int) manifest.KubeVersion { return manifest.KubeVersion{Major: 1, Minor: minor} }
	beta := servedversions.Entry{Group: "g.io", Version: "v1beta1", Kind: "K", Exists: servedversions.Span{From: 16, To: 24}, Served: servedversions.Span{From: 16, To: 24}}
	alpha := servedversions.Entry{Group: "g.io", Version: "v1alpha1", Kind: "K", Exists: servedversions.Span{From: 30, To: 34}}
	ga := servedversions.Entry{Group: "g.io", Version: "v1", Kind: "K", Exists: servedversions.Span{From: 20, To: 37}, Served: servedversions.Span{From: 20, To: 37}}
	entry := func(version string, removed int) API {
		a := API{APIVersion: "g.io/" + version, Kind: "K", Deprecated: v(15), Replacement: "g.io/v1"}
		if removed > 0 {
			a.Removed = v(removed)
		}
		return a
	}
	for _, tc := range []struct {
		name   string
		apis   []API
		served []servedversions.Entry
		want   string // "" for agreement
	}{
		{"agree", []API{entry("v1beta1", 25), entry("v1alpha1", 35)}, []servedversions.Entry{beta, alpha, ga}, ""},
		{"removed later than served", []API{entry("v1beta1", 26), entry("v1alpha1", 35)}, []servedversions.Entry{beta, alpha, ga}, "g.io/v1beta1 K: apis.yaml says removed in 1.26, the table serves it up to 1.24"},
		{"removed earlier than it exists", []API{entry("v1beta1", 25), entry("v1alpha1", 34)}, []servedversions.Entry{beta, alpha, ga}, "g.io/v1alpha1 K: apis.yaml says removed in 1.34, the table has it (off by default) up to 1.34"},
		{"removal missing", []API{entry("v1alpha1", 35)}, []servedversions.Entry{beta, alpha, ga}, "g.io/v1beta1 K: served by default up to 1.24, then no longer, and apis.yaml does not list it"},
		{"removed but never had", []API{entry("v1beta1", 25), entry("v1beta2", 30)}, []servedversions.Entry{beta, ga}, "g.io/v1beta2 K: apis.yaml says removed in 1.30, but no release from 1.16 has it"},
		{"scheduled but gone", []API{entry("v1beta1", 25), entry("v1alpha1", 0)}, []servedversions.Entry{beta, alpha, ga}, "g.io/v1alpha1 K: apis.yaml schedules its removal after 1.37, but Kubernetes 1.37 does not have it"},
		{"removed at 1.16 but served", []API{entry("v1beta1", 16)}, []servedversions.Entry{beta, ga}, "g.io/v1beta1 K: apis.yaml says removed in 1.16, but the table serves it in 1.16-1.24"},
	} {
		got := disagreements(tc.apis, tc.served)
		switch {
		case tc.want == "" && len(got) > 0:
			t.Errorf("%s: %q", tc.name, got)
		case tc.want != "" && (len(got) != 1 || !strings.HasPrefix(got[0], tc.want)):
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
}
