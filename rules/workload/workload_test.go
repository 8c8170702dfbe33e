package workload

import (
	"testing"

	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules"
	"github.com/kilnhq/kiln/rules/internal/ruletest"
)

func TestFixtures(t *testing.T) { ruletest.CheckFixtures(t, Checker) }

func TestRuleDocs(t *testing.T) { ruletest.CheckRules(t, Checker) }

func TestImageTag(t *testing.T) {
	tests := []struct {
		image, tag string
		mutable    bool
	}{
		{"nginx", "", true},
		{"nginx:latest", "latest", true},
		{"nginx:1.27", "1.27", false},
		{"registry:5000/team/app", "", true},
		{"registry:5000/team/app:v2", "v2", false},
		{"nginx@sha256:0123", "", false},
		{"nginx:latest@sha256:0123", "", false},
	}
	for _, tt := range tests {
		tag, mutable := imageTag(tt.image)
		if tag != tt.tag || mutable != tt.mutable {
			t.Errorf("imageTag(%q) = %q, %v; want %q, %v", tt.image, tag, mutable, tt.tag, tt.mutable)
		}
	}
}

// TestOnByDefault: the family reports unless the config turns it off, all
// of it with a pattern or one rule by its ID.
func TestOnByDefault(t *testing.T) {
	data := []byte(ruleList[0].Fail)
	objs, errs := manifest.Parse("fail.yaml", data)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	for _, tt := range []struct {
		config map[string]string
		want   int
	}{
		{nil, 1},
		{map[string]string{"workload/*": "off"}, 0},
		{map[string]string{ImageTag: "off"}, 0},
		{map[string]string{Resources: "off"}, 1},
		{map[string]string{"workload/*": "off", ImageTag: "on"}, 1},
	} {
		eng := &rules.Engine{Checkers: []*rules.Checker{Checker}, Options: rules.DefaultOptions(), Config: rules.NewConfig(tt.config, nil)}
		res, err := eng.Run(objs, []rules.FileObjects{{File: "fail.yaml"}})
		if err != nil {
			t.Fatal(err)
		}
		if got := len(res.Findings); got != tt.want {
			t.Errorf("config %v: %d findings, want %d: %v", tt.config, got, tt.want, res.Findings)
		}
	}
}

func TestObservability(t *testing.T) {
	for name, want := range map[string]bool{"metrics": true, "http-metrics": true, "exporter": true, "probes": true, "pprof": true, "http": false, "grpc": false, "webhook": false, "": false, "metricsx": false} {
		if got := observability(name); got != want {
			t.Errorf("observability(%q) = %v, want %v", name, got, want)
		}
	}
}
