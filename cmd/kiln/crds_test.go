package main

import (
	"strings"
	"testing"

	"github.com/kilnhq/kiln/manifest"
)

func TestCRDsList(t *testing.T) {
	code, out, errOut := runKiln(t, "", "crds", "list")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"helm.toolkit.fluxcd.io             flux                         v2.9.5 (default)         HelmRelease\n",
		"helm.toolkit.fluxcd.io             flux                         v2.7.5                   HelmRelease\n",
		"cert-manager.io                    cert-manager                 v1.21.2 (default)        Certificate, CertificateRequest, ClusterIssuer, Issuer\n",
		"  flux v2.9.5: github.com/controlplaneio-fluxcd/flux-operator@v0.59.0 config/data/flux/v2.9.5/*.yaml\n",
		"  cloudnative-pg (postgresql.cnpg.io): unavailable: ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("kiln crds list lacks %q:\n%s", want, out)
		}
	}
}

// TestCRDsExport: the CRDs of the groups named, one per kind, as YAML a
// cluster takes; a pinned version; an unknown group is an input error.
func TestCRDsExport(t *testing.T) {
	cases := []struct {
		args  []string
		code  int
		names []string // the CRDs printed, in order
		in    string   // a substring of the output
	}{
		{[]string{"cert-manager.io", "bitnami.com"}, exitOK,
			[]string{"certificaterequests.cert-manager.io", "certificates.cert-manager.io", "clusterissuers.cert-manager.io", "issuers.cert-manager.io", "sealedsecrets.bitnami.com"},
			"from kiln's catalog: cert-manager v1.21.2"},
		{[]string{"--version", "flux=v2.7.5", "helm.toolkit.fluxcd.io"}, exitOK, []string{"helmreleases.helm.toolkit.fluxcd.io"}, "    name: v2beta2\n"},
		{[]string{"nope.example.com"}, exitInput, nil, ""},
		{[]string{"--version", "flux=v1", "helm.toolkit.fluxcd.io"}, exitInput, nil, ""},
	}
	for _, tc := range cases {
		code, out, errOut := runKiln(t, "", append([]string{"crds", "export"}, tc.args...)...)
		if code != tc.code {
			t.Fatalf("kiln crds export %v: exit %d, want %d: %s", tc.args, code, tc.code, errOut)
		}
		if tc.code != exitOK {
			continue
		}
		objs, _, errs := manifest.ParseSkipping("export.yaml", []byte(out))
		if len(errs) > 0 {
			t.Fatalf("kiln crds export %v: %v", tc.args, errs)
		}
		var names []string
		for _, o := range objs {
			if o.Kind != "CustomResourceDefinition" || o.APIVersion != "apiextensions.k8s.io/v1" {
				t.Errorf("%s %s in the export", o.APIVersion, o.Kind)
			}
			names = append(names, o.Name)
		}
		if strings.Join(names, " ") != strings.Join(tc.names, " ") || !strings.Contains(out, tc.in) {
			t.Errorf("kiln crds export %v: %v, want %v with %q", tc.args, names, tc.names, tc.in)
		}
	}
}
