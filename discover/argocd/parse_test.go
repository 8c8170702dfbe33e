package argocd

import (
	"testing"
)

// TestNormalURL: the forms of one repository compare equal, as Argo CD's
// git.SameURL compares them; another repository does not.
func TestNormalURL(t *testing.T) {
	want := "github.com/argoproj/argocd-example-apps"
	for _, u := range []string{
		"https://github.com/argoproj/argocd-example-apps",
		"https://github.com/argoproj/argocd-example-apps.git",
		"https://github.com/argoproj/argocd-example-apps/",
		"git@github.com:argoproj/argocd-example-apps.git",
		"ssh://git@github.com/argoproj/argocd-example-apps",
		"ssh://git@github.com:22/argoproj/argocd-example-apps.git",
		"HTTPS://GitHub.com/Argoproj/ArgoCD-Example-Apps",
	} {
		if got := normalURL(u); got != want {
			t.Errorf("normalURL(%q) = %q, want %q", u, got, want)
		}
	}
	if normalURL("https://github.com/argoproj/argo-cd") == want {
		t.Error("another repository compares equal")
	}
}

// TestGlobs: directory include/exclude match the path from the
// directory, `*` across folders, {a,b} either, [!x] a negated class.
func TestGlobs(t *testing.T) {
	cases := []struct {
		pattern, path string
		want          bool
	}{
		{"*.yaml", "a.yaml", true},
		{"*.yaml", "sub/a.yaml", true},
		{"*.yaml", "a.json", false},
		{"{*.yaml,*.json}", "x/y.json", true},
		{"skip-*", "skip-me.yaml", true},
		{"skip-*", "nested/skip-me.yaml", false},
		{"[!a]*.yaml", "b.yaml", true},
		{"[!a]*.yaml", "a.yaml", false},
		{"config.yaml", "config.yaml", true},
	}
	for _, c := range cases {
		if got := globs(c.pattern).MatchString(c.path); got != c.want {
			t.Errorf("globs(%q) on %q = %v, want %v", c.pattern, c.path, got, c.want)
		}
	}
}

// TestPathMatch: a git generator's `*` stays within a folder, `**`
// crosses them.
func TestPathMatch(t *testing.T) {
	cases := []struct {
		pattern, path string
		want          bool
	}{
		{"services/*", "services/api", true},
		{"services/*", "services/api/v1", false},
		{"services/**", "services/api/v1", true},
		{"clusters/*/config.json", "clusters/east/config.json", true},
		{"**/config.json", "a/b/config.json", true},
		{"services/legacy", "services/legacy", true},
	}
	for _, c := range cases {
		if got := pathMatch(c.pattern, c.path); got != c.want {
			t.Errorf("pathMatch(%q, %q) = %v, want %v", c.pattern, c.path, got, c.want)
		}
	}
}

// TestSetImage: `kustomize edit set image` forms.
func TestSetImage(t *testing.T) {
	m := map[string]any{"images": []any{map[string]any{"name": "nginx", "newTag": "1.0"}}}
	setImage(m, "nginx:1.27")
	setImage(m, "redis=registry.example.com/redis:7")
	setImage(m, "busybox@sha256:abc")
	setImage(m, "localhost:5000/app:2")
	got := m["images"].([]any)
	want := []map[string]any{
		{"name": "nginx", "newTag": "1.27"},
		{"name": "redis", "newName": "registry.example.com/redis", "newTag": "7"},
		{"name": "busybox", "digest": "sha256:abc"},
		{"name": "localhost:5000/app", "newTag": "2"},
	}
	if len(got) != len(want) {
		t.Fatalf("images = %v", got)
	}
	for i, w := range want {
		g := got[i].(map[string]any)
		if len(g) != len(w) {
			t.Errorf("image %d = %v, want %v", i, g, w)
			continue
		}
		for k, v := range w {
			if g[k] != v {
				t.Errorf("image %d = %v, want %v", i, g, w)
			}
		}
	}
}

// FuzzPatterns: the URL, glob and image readers take any input without
// panicking.
func FuzzPatterns(f *testing.F) {
	for _, s := range []string{"git@h:o/r", "{a,b", "[!", "**/x", "a=b:c@d", "ssh://[::1", "\\"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		normalURL(s)
		if re := globs(s); re != nil {
			re.MatchString(s)
		}
		pathMatch(s, s)
		setImage(map[string]any{}, s)
		kubeVersion(s)
	})
}
