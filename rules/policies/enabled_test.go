package policies

import (
	"sort"
	"strings"
	"testing"

	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules"
	"sigs.k8s.io/yaml"
)

// TestOnlyEnabledRulesRun lints one object that breaks two rules with
// configs that turn one or the other off, in one process: each run reports
// exactly the rules left on (the engine cache is keyed by the policy set).
func TestOnlyEnabledRulesRun(t *testing.T) {
	job := `apiVersion: batch/v1
kind: Job
metadata: {name: export, namespace: ns}
spec:
  template:
    spec:
      restartPolicy: Never
      initContainers:
        - {name: migrate, image: ghcr.io/acme/migrate:1.0, lifecycle: {preStop: {exec: {command: [x]}}}}
      containers:
        - {name: export, image: ghcr.io/acme/export:1.0}
        - {name: istio-proxy, image: docker.io/istio/proxyv2:1.22.0}
`
	objs, errs := manifest.Parse("job.yaml", []byte(job))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	for _, tt := range []struct{ config, want string }{
		{"", "sidecar/classic-in-job sidecar/probe-on-init"},
		{"rules: {sidecar/probe-on-init: off}", "sidecar/classic-in-job"},
		{"rules: {sidecar/classic-in-job: off}", "sidecar/probe-on-init"},
		{"rules: {\"*\": off, sidecar/probe-on-init: on}", "sidecar/probe-on-init"},
	} {
		cfg, err := configOf(tt.config)
		if err != nil {
			t.Fatal(err)
		}
		res, err := (&rules.Engine{Checkers: []*rules.Checker{Checker}, Config: cfg}).Run(objs, nil)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, f := range res.Findings {
			got = append(got, f.Rule)
		}
		sort.Strings(got)
		if strings.Join(got, " ") != tt.want {
			t.Errorf("config %q: rules %v, want %s", tt.config, got, tt.want)
		}
	}
}

// configOf is a Config from the rules of a .kiln.yaml text.
func configOf(text string) (*rules.Config, error) {
	var c struct{ Rules map[string]string }
	if err := yaml.Unmarshal([]byte(text), &c); err != nil {
		return nil, err
	}
	return rules.NewConfig(c.Rules, nil), nil
}
