package conformance

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/kilnhq/kiln/admit"
	"github.com/kilnhq/kiln/admit/catalog"
	"github.com/kilnhq/kiln/manifest"
)

// catalogCorpora are the corpora whose custom resources kiln judges by its
// catalog: every repository of ../shared/gitops (charts/, podinfo's chart
// source, holds no custom resources) and the fixture of
// known-bad (and good) custom resources. (TestConformance runs every
// project of ../shared/realworld the same way: the catalog CRDs kiln used
// are created in its server as the input's are.)
func catalogCorpora(t *testing.T) []corpus {
	cs := []corpus{{"catalog-fixtures", []string{"testdata/catalog"}}}
	repos, _ := os.ReadDir(shared("gitops"))
	for _, r := range repos {
		if r.IsDir() && r.Name() != "charts" {
			cs = append(cs, corpus{"gitops/" + r.Name(), []string{shared(filepath.Join("gitops", r.Name()))}})
		}
	}
	for i := range cs {
		cs[i].paths = resolved(t, cs[i].paths)
	}
	return cs
}

// TestCatalogConformance: every CRD of kiln's catalog is created by
// kube-apiserver v1.37.2 as kiln admits it; and the custom resources of
// ../shared/gitops and of testdata/catalog, judged by kiln with the
// catalog's CRDs, get the server's verdict with the same CRDs installed
// (every server rejection a kiln error, every kiln error a rejection).
func TestCatalogConformance(t *testing.T) {
	needServers(t)
	t.Run("install", func(t *testing.T) {
		s := startServer(t)
		ix, err := catalog.Load()
		if err != nil {
			t.Fatal(err)
		}
		// The default versions first, then the CRDs only other versions
		// hold (the experimental channel's own): one CRD per name.
		var crds []*catalog.CRD
		installed := map[string]bool{}
		for _, pass := range []bool{true, false} {
			for _, e := range ix.Entries {
				if e.Default != pass {
					continue
				}
				for _, c := range e.CRDs {
					if !installed[c.Name()] {
						installed[c.Name()] = true
						crds = append(crds, c)
					}
				}
			}
		}
		var differ []string
		for _, c := range crds {
			content, err := c.Content()
			if err != nil {
				t.Fatal(err)
			}
			o := &manifest.Object{File: "catalog:" + c.Entry.Project + "@" + c.Entry.Version, Item: -1, APIVersion: "apiextensions.k8s.io/v1",
				Kind: "CustomResourceDefinition", Name: c.Name()}
			body, _ := json.Marshal(content)
			o.SetContent(content)
			res := admit.New(nil, manifest.BuiltinKinds(), admit.Options{KubeVersion: manifest.LatestKube}).Admit(o)
			code, resp, _, err := s.do("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions?fieldValidation=Strict", body)
			if err != nil {
				t.Fatal(err)
			}
			if (code != 201) != res.Rejected {
				var problems []string
				for _, p := range res.Problems {
					problems = append(problems, p.Rule+" "+p.Field+": "+p.Message)
				}
				differ = append(differ, fmt.Sprintf("%s (%s): server %d %s; kiln rejected %v %s", c.Name(), c.Entry, code, status(resp), res.Rejected, strings.Join(problems, "; ")))
			}
		}
		for _, d := range differ {
			t.Error(d)
		}
		t.Logf("%d catalog CRDs created by kube-apiserver v1.37.2 and admitted by kiln alike (%d disagreements)", len(crds), len(differ))
		// Every one is established: served, not only stored.
		deadline := time.Now().Add(60 * time.Second)
		names := make([]string, 0, len(installed))
		for n := range installed {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			for {
				_, body, _, _ := s.do("GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"+n, nil)
				if strings.Contains(string(body), `"type":"Established","status":"True"`) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("%s never became established: %s", n, status(body))
				}
				time.Sleep(200 * time.Millisecond)
			}
		}
	})
	table, failures, _, notes := runCorpora(t, catalogCorpora(t))
	t.Logf("custom resources judged by the catalog, against kube-apiserver v1.37.2 with the same CRDs:\n%s\nnot compared:\n%s", table, strings.Join(notes, "\n"))
	if out := os.Getenv("KILN_CATALOG_TABLE"); out != "" {
		text := table + "\n## Disagreements\n\n" + strings.Join(failures, "\n") + "\n\n## Not compared\n\n" + strings.Join(notes, "\n") + "\n"
		if err := os.WriteFile(out, []byte(text), 0o644); err != nil {
			t.Error(err)
		}
	}
}
