package argocd

import (
	"net/url"
	"sort"
	"strings"

	"github.com/kilnhq/kiln/discover"
	"github.com/kilnhq/kiln/manifest"
)

// normalURL is a Git repository URL reduced to host/path, lower case,
// without scheme, user, port, trailing slash or ".git", as Argo CD's
// git.SameURL compares them: https://github.com/o/r.git,
// git@github.com:o/r and ssh://git@github.com/o/r are one repository.
func normalURL(u string) string {
	u = strings.TrimSpace(u)
	if u == "" {
		return ""
	}
	if !strings.Contains(u, "://") {
		// scp-like: [user@]host:path
		if at := strings.Index(u, "@"); at >= 0 && at < strings.Index(u, ":") {
			u = u[at+1:]
		}
		if host, path, ok := strings.Cut(u, ":"); ok {
			u = "ssh://" + host + "/" + strings.TrimPrefix(path, "/")
		}
	}
	p, err := url.Parse(u)
	if err != nil || p.Host == "" {
		return strings.ToLower(strings.TrimSuffix(strings.TrimSuffix(u, "/"), ".git"))
	}
	path := strings.TrimSuffix(strings.TrimSuffix(p.Path, "/"), ".git")
	return strings.ToLower(p.Hostname() + path)
}

// repository says which repoURLs are this repository.
type repository struct {
	urls map[string]bool
	// by says how kiln knows (for the note), "" when it took the one
	// repoURL the Applications name.
	by string
	// root is the folder a path of this repository is read against.
	root string
}

func (r *repository) is(u string) bool { return r.urls[normalURL(u)] }

// thisRepository finds this repository's URLs: argocd.repoURLs of
// .kiln.yaml, else the remotes of the Git checkout the input is in, else
// the one Git repoURL the input's Applications name (said in a note).
func thisRepository(settings []string, roots []string, apps []*app, sets []*manifest.Object) *repository {
	r := &repository{urls: map[string]bool{}}
	if len(roots) > 0 {
		r.root = roots[0]
		if g := discover.GitRoot(roots[0]); g != "" {
			r.root = g
		}
	}
	for _, u := range settings {
		r.urls[normalURL(u)] = true
	}
	if len(r.urls) > 0 {
		r.by = "argocd.repoURLs in .kiln.yaml"
		return r
	}
	if r.root != "" {
		for _, u := range discover.GitRemotes(r.root) {
			r.urls[normalURL(u)] = true
		}
		if len(r.urls) > 0 {
			r.by = "the remotes of the Git checkout"
			return r
		}
	}
	named := map[string]bool{}
	for _, a := range apps {
		for _, s := range a.spec.sources() {
			if s.Chart == "" && s.RepoURL != "" {
				named[normalURL(s.RepoURL)] = true
			}
		}
	}
	for _, o := range sets {
		c, _ := o.Content()
		var walk func(v any)
		walk = func(v any) {
			switch x := v.(type) {
			case map[string]any:
				for k, e := range x {
					if s, ok := e.(string); ok && k == "repoURL" && !strings.Contains(s, "{{") {
						if _, chart := x["chart"]; !chart {
							named[normalURL(s)] = true
						}
					}
					walk(e)
				}
			case []any:
				for _, e := range x {
					walk(e)
				}
			}
		}
		walk(c["spec"])
	}
	if len(named) == 1 {
		for u := range named {
			r.urls[u] = true
		}
	}
	return r
}

// list returns the URLs, sorted.
func (r *repository) list() []string {
	var out []string
	for u := range r.urls {
		out = append(out, u)
	}
	sort.Strings(out)
	return out
}
