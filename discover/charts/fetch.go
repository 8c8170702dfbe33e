package charts

import (
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"helm.sh/helm/v4/pkg/getter"
	"helm.sh/helm/v4/pkg/helmpath"
	"helm.sh/helm/v4/pkg/registry"
	repo "helm.sh/helm/v4/pkg/repo/v1"
)

// Fetcher downloads chart sources into a cache with Helm's own HTTP
// getter and OCI registry client. It is the only code of kiln that opens
// connections, and only `kiln fetch` makes one.
type Fetcher struct {
	Cache *Cache
	// Transport, if set, carries every request (tests); else Go's default
	// with the proxy from the environment.
	Transport *http.Transport
	// RepositoryConfig is Helm's repositories.yaml (credentials of HTTP
	// repositories by URL) and RegistryConfig Helm's registry
	// config.json; "" reads $HELM_REPOSITORY_CONFIG and
	// $HELM_REGISTRY_CONFIG, else Helm's defaults. Docker's config
	// ($DOCKER_CONFIG or ~/.docker/config.json) is read after Helm's, as
	// Helm's registry client does.
	RepositoryConfig, RegistryConfig string

	repos *repo.File
}

// Fetch stores the chart version src resolves to (and, for a version
// constraint, the index or tag list it is resolved against, fetched
// again each time so that a new version is seen) and returns it.
func (f *Fetcher) Fetch(src Source) (Chart, error) {
	switch src.Type {
	case "http":
		return f.fetchHTTP(src)
	case "oci":
		return f.fetchOCI(src)
	}
	return Chart{}, fmt.Errorf("unknown chart source type %q", src.Type)
}

func (f *Fetcher) transport(skipVerify bool) *http.Transport {
	t := f.Transport
	if t == nil {
		t = http.DefaultTransport.(*http.Transport)
	}
	t = t.Clone()
	if skipVerify {
		if t.TLSClientConfig == nil {
			t.TLSClientConfig = &tls.Config{}
		}
		t.TLSClientConfig.InsecureSkipVerify = true
	}
	return t
}

// repoEntry returns the credentials Helm's repositories.yaml keeps for url.
func (f *Fetcher) repoEntry(url string) *repo.Entry {
	if f.repos == nil {
		p := f.RepositoryConfig
		if p == "" {
			p = os.Getenv("HELM_REPOSITORY_CONFIG")
		}
		if p == "" {
			p = helmpath.ConfigPath("repositories.yaml")
		}
		rf, err := repo.LoadFile(p)
		if err != nil {
			rf = repo.NewFile()
		}
		f.repos = rf
	}
	for _, e := range f.repos.Repositories {
		if trimURL(e.URL) == trimURL(url) {
			return e
		}
	}
	return nil
}

func (f *Fetcher) httpGet(src Source, url string) ([]byte, error) {
	opts := []getter.Option{getter.WithURL(src.URL), getter.WithTransport(f.transport(src.InsecureSkipTLSVerify)), getter.WithTimeout(5 * time.Minute)}
	if src.InsecureSkipTLSVerify {
		opts = append(opts, getter.WithInsecureSkipVerifyTLS(true))
	}
	if e := f.repoEntry(src.URL); e != nil && e.Username != "" {
		opts = append(opts, getter.WithBasicAuth(e.Username, e.Password), getter.WithPassCredentialsAll(e.PassCredentialsAll))
	}
	g, err := getter.NewHTTPGetter(opts...)
	if err != nil {
		return nil, err
	}
	buf, err := g.Get(url)
	if err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func (f *Fetcher) fetchHTTP(src Source) (Chart, error) {
	c := f.Cache
	data, err := f.httpGet(src, trimURL(src.URL)+"/index.yaml")
	if err != nil {
		return Chart{}, fmt.Errorf("the index of %s: %v", src.URL, err)
	}
	d, err := c.putBlob(data, "")
	if err != nil {
		return Chart{}, err
	}
	if err := c.putRef(indexKey(src.URL), d, ""); err != nil {
		return Chart{}, err
	}
	idx, err := c.index(src.URL)
	if err != nil {
		return Chart{}, err
	}
	cv, err := ResolveIndex(idx, src.Chart, src.Version)
	if err != nil {
		return Chart{}, err
	}
	key := chartKey(src.URL, src.Chart, cv.Version)
	if p, r, err := c.lookup(key); err == nil {
		return Chart{Path: p, Digest: r.Digest, Version: cv.Version}, nil
	}
	if len(cv.URLs) == 0 {
		return Chart{}, fmt.Errorf("chart %s version %s has no URL in the index of %s", src.Chart, cv.Version, src.URL)
	}
	u, err := repo.ResolveReferenceURL(src.URL, cv.URLs[0])
	if err != nil {
		return Chart{}, err
	}
	tgz, err := f.httpGet(src, u)
	if err != nil {
		return Chart{}, fmt.Errorf("chart %s version %s: %v", src.Chart, cv.Version, err)
	}
	d, err = c.putBlob(tgz, cv.Digest)
	if err != nil {
		return Chart{}, fmt.Errorf("chart %s version %s from %s: %v", src.Chart, cv.Version, u, err)
	}
	if err := c.putRef(key, d, cv.Version); err != nil {
		return Chart{}, err
	}
	p, _ := c.blobPath(d)
	return Chart{Path: p, Digest: d, Version: cv.Version}, nil
}

func (f *Fetcher) registry(src Source) (*registry.Client, error) {
	opts := []registry.ClientOption{registry.ClientOptHTTPClient(&http.Client{Transport: f.transport(src.InsecureSkipTLSVerify)})}
	if src.PlainHTTP {
		opts = append(opts, registry.ClientOptPlainHTTP())
	}
	cfg := f.RegistryConfig
	if cfg == "" {
		cfg = os.Getenv("HELM_REGISTRY_CONFIG")
	}
	if cfg != "" {
		opts = append(opts, registry.ClientOptCredentialsFile(cfg))
	}
	return registry.NewClient(opts...)
}

func (f *Fetcher) fetchOCI(src Source) (Chart, error) {
	c := f.Cache
	rc, err := f.registry(src)
	if err != nil {
		return Chart{}, err
	}
	host := strings.TrimPrefix(trimURL(src.URL), "oci://")
	var ref, key, version string
	switch {
	case src.Digest != "":
		ref, key, version = host+"@"+src.Digest, ociDigestKey(src.URL, src.Digest), src.Digest
	case src.Version != "":
		tags, err := rc.Tags(host)
		if err != nil {
			return Chart{}, fmt.Errorf("the tags of %s: %v", src.URL, err)
		}
		data, _ := json.Marshal(tags)
		d, err := c.putBlob(data, "")
		if err != nil {
			return Chart{}, err
		}
		if err := c.putRef(tagsKey(src.URL), d, ""); err != nil {
			return Chart{}, err
		}
		if version, err = ResolveTags(tags, src.Version, src.SemverFilter); err != nil {
			return Chart{}, fmt.Errorf("%s: %v", src.URL, err)
		}
		// OCI tags cannot hold "+": Helm pushes build metadata as "_".
		ref, key = host+":"+strings.ReplaceAll(version, "+", "_"), ociTagKey(src.URL, version)
	default:
		version = orLatest(src.Tag)
		ref, key = host+":"+version, ociTagKey(src.URL, version)
	}
	if src.Digest != "" || src.Version != "" {
		// A digest or a resolved version names fixed content: no pull again.
		if p, r, err := c.lookup(key); err == nil {
			return Chart{Path: p, Digest: r.Digest, Version: orDefault(r.Version, version)}, nil
		}
	}
	res, err := rc.Pull(ref, registry.PullOptWithChart(true))
	if err != nil {
		return Chart{}, fmt.Errorf("%s: %v", ref, err)
	}
	d, err := c.putBlob(res.Chart.Data, res.Chart.Digest)
	if err != nil {
		return Chart{}, fmt.Errorf("%s: %v", ref, err)
	}
	if res.Chart.Meta != nil {
		version = res.Chart.Meta.Version
	}
	if err := c.putRef(key, d, version); err != nil {
		return Chart{}, err
	}
	if res.Manifest != nil && res.Manifest.Digest != "" && src.Digest == "" {
		if err := c.putRef(ociDigestKey(src.URL, res.Manifest.Digest), d, version); err != nil {
			return Chart{}, err
		}
	}
	p, _ := c.blobPath(d)
	return Chart{Path: p, Digest: d, Version: version}, nil
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
