package settings

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// TestOneDecoderEverySource: the same bad value is refused by the same
// check from every source, and the message names where it came from.
func TestOneDecoderEverySource(t *testing.T) {
	fromFlags := func(args ...string) error {
		fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
		f := RegisterFlags(fs, Lint, FailOn, Helm)
		if err := fs.Parse(args); err != nil {
			return err
		}
		_, err := f.Settings()
		return err
	}
	fromSpec := func(text string) error {
		var n yaml.Node
		if err := yaml.Unmarshal([]byte(text), &n); err != nil {
			t.Fatal(err)
		}
		_, err := FromSpec(n.Content[0])
		return err
	}
	fromEnv := func(env fakeEnv) error {
		_, _, err := FromArgo(env.lookup, env.environ())
		return err
	}
	fromFile := func(text string) error {
		_, err := parse("repo/.kiln.yaml", []byte(text))
		return err
	}
	tests := []struct {
		source string
		err    error
		want   string
	}{
		{"flag", fromFlags("--psa-level", "strict"), `--psa-level: "strict" is not a Pod Security level`},
		{"file", fromFile("psa:\n  level: strict\n"), `repo/.kiln.yaml:2:10: psa.level: "strict" is not a Pod Security level`},
		{"functionConfig", fromSpec("psaLevel: strict\n"), `functionConfig line 1: spec.psaLevel: "strict" is not a Pod Security level`},
		{"Argo CD env", fromEnv(fakeEnv{"ARGOCD_ENV_KILN_PSA_LEVEL": "strict"}), `ARGOCD_ENV_KILN_PSA_LEVEL: "strict" is not a Pod Security level`},
		{"Argo CD parameter", fromEnv(fakeEnv{"ARGOCD_APP_PARAMETERS": `[{"name":"psa-level","string":"strict"}]`}), `plugin parameter psa-level: "strict" is not a Pod Security level`},
		{"flag kube", fromFlags("--kube-version", "1.2"), "--kube-version: Kubernetes 1.2 is outside the range"},
		{"file kube", fromFile("kubeVersion: \"1.2\"\n"), "repo/.kiln.yaml:1:14: kubeVersion: Kubernetes 1.2 is outside the range"},
		{"flag fail-on", fromFlags("--fail-on", "sometimes"), `--fail-on: "sometimes": use error, warning or never`},
		{"file failOn", fromFile("failOn: sometimes\n"), `repo/.kiln.yaml:1:9: failOn: "sometimes": use error, warning or never`},
		{"spec list", fromSpec("policies: p.yaml\n"), "functionConfig line 1: spec.policies: policies must be a list of strings"},
		{"file list", fromFile("policies: p.yaml\n"), "repo/.kiln.yaml:1:11: policies must be a list of strings"},
		{"spec unknown", fromSpec("psa: x\n"), "functionConfig line 1: unknown key spec.psa (known: "},
		{"file unknown", fromFile("kubernetes: \"1.30\"\n"), `repo/.kiln.yaml:1:1: unknown config key "kubernetes"`},
		{"file rule value", fromFile("rules:\n  psa/privileged: loud\n"), `repo/.kiln.yaml:2:19: rules.psa/privileged: "loud" is not a setting`},
		{"spec rule value", fromSpec("rules: {psa/privileged: loud}\n"), `functionConfig line 1: spec.rules: rules.psa/privileged: "loud" is not a setting`},
		{"flag service CIDR", fromFlags("--service-cidr", "10.96.0.0"), `--service-cidr: serviceCIDRs: "10.96.0.0" is not a CIDR`},
		{"flag service CIDRs of one family", fromFlags("--service-cidr", "10.96.0.0/12,10.100.0.0/16"), "--service-cidr: serviceCIDRs: the two CIDRs of a dual-stack service network must be one IPv4 and one IPv6"},
		{"file service CIDRs", fromFile("serviceCIDRs: [10.96.0.0/12, fd00::/108, fd01::/108]\n"), "repo/.kiln.yaml:1:15: serviceCIDRs has one or two CIDRs"},
		{"file service CIDR", fromFile("serviceCIDRs: [10.96.0.0/12, fd00::]\n"), `repo/.kiln.yaml:1:30: serviceCIDRs: "fd00::" is not a CIDR`},
		{"Argo CD service CIDRs", fromEnv(fakeEnv{"ARGOCD_ENV_KILN_SERVICE_CIDRS": "fd00::/108 fd01::/108"}), "ARGOCD_ENV_KILN_SERVICE_CIDRS: serviceCIDRs: the two CIDRs"},
	}
	for _, tt := range tests {
		t.Run(tt.source, func(t *testing.T) {
			if tt.err == nil || !strings.HasPrefix(tt.err.Error(), tt.want) {
				t.Errorf("error = %v, want prefix %q", tt.err, tt.want)
			}
		})
	}
}

// TestPrecedence: the config file first, then the other source; a list of
// policies adds to the file's, a later source's replaces an earlier one's;
// Helm flags apply after a chart's own entry.
func TestPrecedence(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, FileName)
	write(t, cfg, "kubeVersion: \"1.30\"\npsa: {level: baseline}\npolicies: [file.yaml]\nrules: {psa/privileged: warning}\n"+
		"helm:\n  values: [v.yaml]\n  charts:\n    app: {values: [app.yaml], releaseName: shop}\n"+
		"serviceCIDRs: [10.96.0.0/16, fd00:10:96::/112]\n")
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	f := RegisterFlags(fs, Lint, FailOn, Helm)
	if err := fs.Parse([]string{"--config", cfg, "--kube-version", "1.31", "--policy", "flag.yaml", "--values", "flag-values.yaml", "--release-name", "cli"}); err != nil {
		t.Fatal(err)
	}
	given, err := f.Settings()
	if err != nil {
		t.Fatal(err)
	}
	s, err := given.Load(nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.File != cfg || s.KubeVersion != "1.31" || s.PSALevel != "baseline" || strings.Join(s.Policies, ",") != "file.yaml,flag.yaml" {
		t.Errorf("settings = %+v", s)
	}
	if got := s.Options().ServiceCIDRs; strings.Join(got, ",") != "10.96.0.0/16,fd00:10:96::/112" {
		t.Errorf("service CIDRs = %v, want the file's", got)
	}
	if !s.RuleConfig().Enabled("psa/privileged") || s.Options().KubeVersion.String() != "1.31" {
		t.Errorf("rules or options wrong: %+v", s.Options())
	}
	ch := s.Chart(filepath.Join(dir, "app"))
	want := []string{filepath.Join(dir, "v.yaml"), filepath.Join(dir, "app.yaml"), "flag-values.yaml"}
	if strings.Join(ch.ValueFiles, ",") != strings.Join(want, ",") || ch.ReleaseName != "cli" {
		t.Errorf("chart settings = %+v, want values %v and release cli", ch, want)
	}
	// Argo CD: the parameter's list replaces the env's, both over the file's.
	env := fakeEnv{"ARGOCD_ENV_KILN_CONFIG": cfg, "ARGOCD_ENV_KILN_POLICIES": "env.yaml", "ARGOCD_APP_PARAMETERS": `[{"name":"policies","array":["param.yaml"]}]`}
	given, _, err = FromArgo(env.lookup, env.environ())
	if err != nil {
		t.Fatal(err)
	}
	if s, err = given.Load(nil); err != nil {
		t.Fatal(err)
	}
	if strings.Join(s.Policies, ",") != "file.yaml,param.yaml" {
		t.Errorf("policies = %v, want file.yaml,param.yaml", s.Policies)
	}
}

// TestNearest: each path's nearest .kiln.yaml, up to the repository root;
// two paths with different ones are an error naming both.
func TestNearest(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{".git", "a/deep", "b"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write(t, filepath.Join(root, FileName), "{}\n")
	write(t, filepath.Join(root, "a", FileName), "{}\n")
	write(t, filepath.Join(root, "a", "deep", "x.yaml"), "{}\n")
	t.Chdir(root)
	tests := []struct {
		paths     []string
		want, err string
	}{
		{[]string{"a/deep/x.yaml"}, "a/.kiln.yaml", ""},
		{[]string{"a/deep", "a"}, "a/.kiln.yaml", ""},
		{[]string{"b"}, ".kiln.yaml", ""},
		{nil, ".kiln.yaml", ""},
		{[]string{"a", "b"}, "", "b: its nearest .kiln.yaml is .kiln.yaml, but a's is a/.kiln.yaml"},
	}
	for _, tt := range tests {
		got, err := Nearest(tt.paths)
		if tt.err != "" {
			if err == nil || !strings.HasPrefix(err.Error(), tt.err) {
				t.Errorf("Nearest(%v) error = %v, want %q", tt.paths, err, tt.err)
			}
			continue
		}
		if err != nil || filepath.ToSlash(got) != tt.want {
			t.Errorf("Nearest(%v) = %q, %v; want %q", tt.paths, got, err, tt.want)
		}
	}
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}
