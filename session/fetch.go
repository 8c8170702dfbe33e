package session

import (
	"fmt"
	"net/http"

	"github.com/kilnhq/kiln/discover/charts"
	"github.com/kilnhq/kiln/manifest"
)

// FetchOptions tune Fetch.
type FetchOptions struct {
	// OfflineCheck only says which charts lint would miss: no connection.
	OfflineCheck bool
	// CacheDir is the chart cache ("": $XDG_CACHE_HOME/kiln/charts).
	CacheDir string
	// Transport carries the requests (tests); nil: Go's default.
	Transport *http.Transport
}

// FetchedChart is a chart version in the cache and the source it is for.
type FetchedChart struct {
	Source charts.Source
	charts.Chart
}

// Fetched is what Fetch did.
type Fetched struct {
	// Sources are the chart sources the input names, each once.
	Sources []charts.Source
	// Charts are the chart versions fetched (or found, for an offline
	// check); Missing the sources lint would miss.
	Charts  []FetchedChart
	Missing []charts.Source
	// Errs say why a source could not be fetched.
	Errs []error
	// Notes say, once per Flux source, what kiln fetch could not use (a
	// spec.secretRef: kiln cannot read cluster Secrets).
	Notes []string
}

// Fetch finds every chart source the input's HelmReleases name (as lint
// renders them) and downloads what the chart cache lacks: `kiln fetch`,
// the only part of kiln that opens connections.
func (s *Session) Fetch(paths []string, o FetchOptions) (*Fetched, error) {
	cache, err := charts.Open(o.CacheDir)
	if err != nil {
		return nil, err
	}
	found := s.discover(paths, readOptions{charts: cache})
	out := &Fetched{}
	seen := map[charts.Source]bool{}
	said := map[string]bool{}
	for _, src := range found.Charts {
		if !seen[src] {
			seen[src] = true
			out.Sources = append(out.Sources, src)
		}
		if src.SecretRef != "" && !said[src.SecretRef] {
			said[src.SecretRef] = true
			out.Notes = append(out.Notes, fmt.Sprintf("note: %s (spec.secretRef): kiln cannot read cluster Secrets, so kiln fetch takes the credentials for %s from Helm's repository and registry config, Docker's config and the environment", src.SecretRef, src.URL))
		}
	}
	f := &charts.Fetcher{Cache: cache, Transport: o.Transport}
	keep := map[string]bool{}
	for _, src := range out.Sources {
		if o.OfflineCheck {
			c, err := cache.Lookup(src)
			if err != nil {
				out.Missing = append(out.Missing, src)
				continue
			}
			out.Charts = append(out.Charts, FetchedChart{src, c})
			continue
		}
		c, err := f.Fetch(src)
		if err != nil {
			out.Missing = append(out.Missing, src)
			out.Errs = append(out.Errs, &manifest.Error{Pos: manifest.Position{File: src.URL}, Msg: fmt.Sprintf("cannot fetch %s: %v", src, err)})
			continue
		}
		keep[c.Digest] = true
		out.Charts = append(out.Charts, FetchedChart{src, c})
	}
	if !o.OfflineCheck {
		if err := cache.Trim(keep); err != nil {
			return out, err
		}
	}
	return out, nil
}
