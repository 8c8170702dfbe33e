package compiler

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kilnhq/kiln/internal/golden"
	"github.com/kilnhq/kiln/manifest"
)

// TestSyncWaves writes the Argo CD sync wave of every object of every
// example to testdata/syncwaves.golden (docs/integrations.md's table, applied), and
// checks that AddSyncWaves annotates compiled objects only, keeps a wave the
// spec sets, and never puts a claim in an earlier wave than a workload.
func TestSyncWaves(t *testing.T) {
	var table strings.Builder
	for _, spec := range append(examples(t), "testdata/design.yaml") {
		objs := readSpecs(t, spec)
		x := Expand(objs)
		if len(x.Errors) > 0 {
			t.Fatal(x.Errors)
		}
		if err := x.AddSyncWaves(); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&table, "%s:\n", filepath.ToSlash(spec))
		for i, o := range x.Compiled {
			if x.All[i] != o {
				t.Errorf("%s: All[%d] is not the annotated Compiled[%d]", spec, i, i)
			}
			fmt.Fprintf(&table, "  %3s  %s/%s\n", o.Annotations[SyncWaveAnnotation], o.Kind, o.Name)
			// The annotation is in the object's YAML, not only in its fields.
			if !strings.Contains(string(stream(t, []*manifest.Object{o})), SyncWaveAnnotation) {
				t.Errorf("%s %s/%s: no %s in its YAML", spec, o.Kind, o.Name, SyncWaveAnnotation)
			}
		}
	}
	golden.Check(t, "testdata/syncwaves.golden", []byte(table.String()))

	// A claim binds only once a pod uses it with a WaitForFirstConsumer
	// class, and Argo CD waits for a wave's claims to be Bound: claims go
	// no earlier than any workload.
	claim, _ := SyncWave("PersistentVolumeClaim")
	for _, kind := range []string{"Deployment", "JobSet"} {
		if w, _ := SyncWave(kind); claim < w {
			t.Errorf("PersistentVolumeClaim wave %d is before %s wave %d: the sync would wait forever for a WaitForFirstConsumer claim", claim, kind, w)
		}
	}
}

// TestSyncWavesKeepOwn: plain manifests pass through untouched, and a wave
// set in the spec's metadata.annotations (on every object) is kept.
func TestSyncWavesKeepOwn(t *testing.T) {
	src := svcSpec("      ports: {http: 80}\n") + "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: plain, namespace: a}\n"
	own := strings.Replace(svcSpec(""), "metadata: {name: a, namespace: a}", "metadata: {name: a, namespace: a, annotations: {argocd.argoproj.io/sync-wave: \"5\"}}", 1)
	for _, tt := range []struct {
		src  string
		want string // kind/name=wave of every object of All
	}{
		{src, "Service/web=-1 Deployment/web=0 ConfigMap/plain="},
		{own, "Deployment/web=5"},
	} {
		objs, errs := manifest.Parse("w.yaml", []byte(tt.src))
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		x := Expand(objs)
		if err := x.AddSyncWaves(); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, o := range x.All {
			got = append(got, o.Kind+"/"+o.Name+"="+o.Annotations[SyncWaveAnnotation])
		}
		if strings.Join(got, " ") != tt.want {
			t.Errorf("waves %q, want %q", strings.Join(got, " "), tt.want)
		}
	}
}

// readSpecs parses a spec file (its objects keep the file's name, so that
// config files are read relative to it).
func readSpecs(t *testing.T, path string) []*manifest.Object {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	objs, errs := manifest.Parse(path, data)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	return objs
}
