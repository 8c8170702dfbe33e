package session

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kilnhq/kiln/internal/golden"
	"github.com/kilnhq/kiln/report/objdiff"
	"github.com/kilnhq/kiln/session/settings"
)

// diffRun is kiln diff in the current directory against base, with the
// content cache in cacheDir.
func diffRun(t *testing.T, base, cacheDir string, paths ...string) *Diffed {
	t.Helper()
	given := settings.New()
	if err := given.Apply(settings.Assignment{Key: "cacheDir", Value: settings.Scalar(cacheDir), From: "--cache-dir"}); err != nil {
		t.Fatal(err)
	}
	s, err := New(given, paths, nil)
	if err != nil {
		t.Fatal(err)
	}
	d, err := s.Diff(paths, DiffOptions{Base: base})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestDiff is the walk through on a Git history built here
// (testdata/diff committed, then changed in the worktree): a HelmRelease's
// values change its image and add a hostPath volume mounted in the
// container, from a chart in the repository; a kustomize component's patch
// changes the replicas of two overlays; a ConfigMap's file is moved; a
// Secret's password changes; a ConfigMap is removed. The diff shows those
// objects alone, per app, with the fields changed, Pod Security's new
// findings on the release's Deployment, and hash markers for the Secret.
func TestDiff(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	t.Setenv("TMPDIR", t.TempDir())                        // to see that the revision's copy is removed
	t.Setenv("GIT_AUTHOR_DATE", "2026-01-02T03:04:05Z")    // commits named alike on every run
	t.Setenv("GIT_COMMITTER_DATE", "2026-01-02T03:04:05Z") // (the golden file names the base's)
	dir, cacheDir := t.TempDir(), t.TempDir()
	copyDir(t, "testdata/diff", dir)
	git(t, dir, "init", "-q", "-b", "main")
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "base")
	t.Chdir(dir)

	if d := diffRun(t, "HEAD", cacheDir); !d.Report.Empty() || len(d.Errs) > 0 {
		t.Fatalf("a clean tree: %+v, errors %v; want no difference", d.Report.Apps, d.Errs)
	}

	editFile(t, "apps/web.yaml", func(s string) string {
		return strings.Replace(s, "    image: nginx:1.25.3\n", "    image: nginx:1.27.0\n    hostPath: /var/log\n", 1)
	})
	editFile(t, "kust/components/scale/replicas.yaml", func(s string) string { return strings.Replace(s, "replicas: 2", "replicas: 3", 1) })
	os.MkdirAll("plain/nginx", 0o755)
	if err := os.Rename("plain/config.yaml", "plain/nginx/config.yaml"); err != nil {
		t.Fatal(err)
	}
	editFile(t, "plain/secret.yaml", func(s string) string { return strings.Replace(s, "hunter2-old-password", "hunter3-new-password", 1) })
	os.Remove("plain/old.yaml")
	editFile(t, "argo/guestbook.yaml", func(s string) string { return strings.Replace(s, `value: "2"`, `value: "4"`, 1) })

	d := diffRun(t, "main", cacheDir)
	if len(d.Errs) > 0 {
		t.Fatalf("input errors: %v", d.Errs)
	}
	got := map[string][]string{} // app → "op kind ns/name: paths"
	var release *objdiff.Object
	for _, a := range d.Report.Apps {
		for i, o := range a.Objects {
			var paths []string
			for _, c := range o.Changes {
				paths = append(paths, string(c.Op)+" "+c.Path)
			}
			got[a.Name] = append(got[a.Name], string(o.Op)+" "+o.Kind+" "+o.Namespace+"/"+o.Name+": "+strings.Join(paths, ", "))
			if a.Name == "HelmRelease web/web" && o.Kind == "Deployment" {
				release = &a.Objects[i]
			}
		}
	}
	want := map[string][]string{
		"HelmRelease web/web": {"changed Deployment web/web: changed spec.template.spec.containers[name=web].image, " +
			"added spec.template.spec.containers[name=web].volumeMounts[name=host], added spec.template.spec.volumes[name=host]"},
		"kustomization kust/overlays/production": {"changed Deployment production/api: changed spec.replicas"},
		"kustomization kust/overlays/staging":    {"changed Deployment staging/api: changed spec.replicas"},
		"folder apps":                            {"changed HelmRelease web/web: changed spec.values.image, added spec.values.hostPath"},
		"folder plain":                           {"removed ConfigMap web/legacy: ", "changed Secret web/db: changed stringData.password"},
		"Application guestbook":                  {"changed Deployment guestbook/guestbook: changed spec.replicas"},
		"folder argo":                            {"changed Application argocd/guestbook: changed spec.source.helm.parameters[name=replicas].value"},
	}
	if g, w := jsonText(got), jsonText(want); g != w {
		t.Errorf("the diff:\n%s\nwant:\n%s", g, w)
	}
	if release == nil || len(release.Introduced) == 0 || len(release.Fixed) != 0 {
		t.Fatalf("the release's Deployment: %+v; want new findings, none fixed", release)
	}
	for _, f := range release.Introduced {
		if !strings.HasPrefix(f.Rule, "psa/") || !strings.Contains(f.Field, "volumes") {
			t.Errorf("a new finding that is not Pod Security's on the hostPath volume: %+v", f)
		}
	}
	for _, a := range d.Report.Apps {
		for _, o := range a.Objects {
			if a.Name != "HelmRelease web/web" {
				if len(o.Introduced)+len(o.Fixed) > 0 {
					t.Errorf("%s %s: findings changed: %+v %+v", a.Name, o.Name, o.Introduced, o.Fixed)
				}
			}
		}
	}
	var text, md, js bytes.Buffer
	for _, w := range []struct {
		format string
		buf    *bytes.Buffer
	}{{"text", &text}, {"markdown", &md}, {"json", &js}} {
		if err := objdiff.Write(w.buf, w.format, d.Report, objdiff.Options{Context: 1, Limit: objdiff.CommentLimit}); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(w.buf.String(), "hunter") {
			t.Errorf("the %s output shows the Secret's value:\n%s", w.format, w.buf)
		}
		if !strings.Contains(w.buf.String(), "<secret sha256:") {
			t.Errorf("the %s output has no hash marker for the Secret", w.format)
		}
	}
	golden.Check(t, filepath.Join(wd(t), "testdata/diff.golden"), fmtAll(text.String(), md.String()))
	if left, _ := os.ReadDir(os.Getenv("TMPDIR")); len(left) != 0 {
		t.Errorf("the revision's copy was left in the temp dir: %v", left)
	}

	// Committed, the change is the tree's: no difference with HEAD.
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "change")
	if d := diffRun(t, "HEAD", cacheDir); !d.Report.Empty() {
		t.Errorf("after the commit: %+v; want no difference", d.Report.Apps)
	}

	// The release's values from a Secret (valuesFrom) change: the value the
	// chart renders into the Deployment is a hash marker too.
	editFile(t, "apps/web.yaml", func(s string) string { return strings.Replace(s, "first-db-password-1", "second-db-password-2", 1) })
	d = diffRun(t, "HEAD", cacheDir)
	got = map[string][]string{}
	for _, a := range d.Report.Apps {
		for _, o := range a.Objects {
			for _, c := range o.Changes {
				got[a.Name] = append(got[a.Name], o.Kind+" "+c.Path+": "+fmt.Sprint(c.Old)+" → "+fmt.Sprint(c.New))
			}
		}
	}
	marker := func(s string) string { return objdiff.Marker([]byte(s)) }
	want = map[string][]string{
		"HelmRelease web/web": {"Deployment spec.template.spec.containers[name=web].env[name=DB_PASSWORD].value: " + marker("first-db-password-1") + " → " + marker("second-db-password-2")},
		"folder apps":         {`Secret stringData["values.yaml"]: ` + marker("dbPassword: first-db-password-1\n") + " → " + marker("dbPassword: second-db-password-2\n")},
	}
	if g, w := jsonText(got), jsonText(want); g != w {
		t.Errorf("a Secret's values changed:\n%s\nwant:\n%s", g, w)
	}
	var out bytes.Buffer
	objdiff.Write(&out, "json", d.Report, objdiff.Options{})
	if strings.Contains(out.String(), "db-password") {
		t.Errorf("the diff shows the Secret's value:\n%s", out.String())
	}
	git(t, dir, "commit", "-q", "-am", "password")
	if d := diffRun(t, "HEAD~2", cacheDir, "kust"); len(d.Report.Apps) != 2 {
		t.Errorf("kiln diff kust: %d apps, want the two overlays", len(d.Report.Apps))
	}
	// From a subdirectory, with a relative cache directory.
	t.Chdir("kust")
	rel, _ := filepath.Rel(filepath.Join(dir, "kust"), cacheDir)
	d = diffRun(t, "HEAD~2", rel)
	if len(d.Report.Apps) != 2 || d.Report.Apps[0].Name != "kustomization overlays/production" {
		t.Errorf("kiln diff in kust/: %+v, want the two overlays", d.Report.Apps)
	}
}

var testWD, _ = os.Getwd()

// wd is the package's directory (the tests move the current one).
func wd(t *testing.T) string { return testWD }

func jsonText(v any) string {
	data, _ := json.MarshalIndent(v, "", "  ")
	return string(data)
}

func fmtAll(text, md string) []byte {
	return []byte("== text\n" + text + "== markdown\n" + md)
}
