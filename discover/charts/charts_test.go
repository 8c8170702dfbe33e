package charts

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
	helmregistry "helm.sh/helm/v4/pkg/registry"
	repo "helm.sh/helm/v4/pkg/repo/v1"
)

// packageChart packages testdata/podinfo (the chart the Flux examples
// install) at version, as `helm package` does, and returns the .tgz.
func packageChart(t *testing.T, version string) []byte {
	t.Helper()
	ch, err := loader.LoadDir("testdata/podinfo")
	if err != nil {
		t.Fatal(err)
	}
	ch.Metadata.Version = version
	p, err := chartutil.Save(ch, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func sha(data []byte) string {
	s := sha256.Sum256(data)
	return hex.EncodeToString(s[:])
}

// helmRepo serves an HTTP Helm repository with podinfo 6.14.1 and
// 6.15.0-rc.1; badDigest makes the index lie about 6.14.1's digest.
func helmRepo(t *testing.T, badDigest bool) (*httptest.Server, map[string][]byte) {
	t.Helper()
	pkgs := map[string][]byte{"6.14.1": packageChart(t, "6.14.1"), "6.15.0-rc.1": packageChart(t, "6.15.0-rc.1")}
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	idx := repo.NewIndexFile()
	for v, data := range pkgs {
		ch, err := loader.LoadArchive(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		d := sha(data)
		if badDigest && v == "6.14.1" {
			d = sha([]byte("something else"))
		}
		if err := idx.MustAdd(ch.Metadata, "podinfo-"+v+".tgz", srv.URL+"/charts", d); err != nil {
			t.Fatal(err)
		}
		body := data
		mux.HandleFunc("/charts/podinfo-"+v+".tgz", func(w http.ResponseWriter, _ *http.Request) { w.Write(body) })
	}
	p := filepath.Join(t.TempDir(), "index.yaml")
	if err := idx.WriteFile(p, 0o644); err != nil {
		t.Fatal(err)
	}
	index, _ := os.ReadFile(p)
	mux.HandleFunc("/index.yaml", func(w http.ResponseWriter, _ *http.Request) { w.Write(index) })
	return srv, pkgs
}

// ociRegistry starts go-containerregistry's registry on 127.0.0.1 (plain
// HTTP) and pushes podinfo 6.14.1 and 6.15.0 with Helm's registry client;
// it returns the chart's repository (host/charts/podinfo) and the 6.14.1
// push's manifest digest.
func ociRegistry(t *testing.T) (*httptest.Server, string, string, []byte) {
	t.Helper()
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "http://") + "/charts/podinfo"
	rc, err := helmregistry.NewClient(helmregistry.ClientOptPlainHTTP(), helmregistry.ClientOptCredentialsFile(filepath.Join(t.TempDir(), "config.json")))
	if err != nil {
		t.Fatal(err)
	}
	var digest string
	var data []byte
	for _, v := range []string{"6.15.0", "6.14.1"} {
		pkg := packageChart(t, v)
		res, err := rc.Push(pkg, host+":"+v, helmregistry.PushOptStrictMode(false))
		if err != nil {
			t.Fatalf("push %s: %v", v, err)
		}
		digest, data = res.Manifest.Digest, pkg
	}
	return srv, host, digest, data
}

func TestFetchHTTPRepository(t *testing.T) {
	srv, pkgs := helmRepo(t, false)
	c := &Cache{Dir: t.TempDir()}
	f := &Fetcher{Cache: c, RepositoryConfig: filepath.Join(t.TempDir(), "none.yaml")}
	tests := []struct{ version, want string }{
		{"", "6.14.1"},                   // latest stable
		{"*", "6.14.1"},                  // latest stable
		{">=1.0.0-alpha", "6.15.0-rc.1"}, // a pre-release constraint admits pre-releases (the staging overlay's)
		{"6.14.1", "6.14.1"},
		{"~6.14", "6.14.1"},
	}
	for _, tt := range tests {
		src := Source{Type: "http", URL: srv.URL + "/", Chart: "podinfo", Version: tt.version}
		got, err := f.Fetch(src)
		if err != nil {
			t.Fatalf("Fetch(%q): %v", tt.version, err)
		}
		if got.Version != tt.want || got.Digest != "sha256:"+sha(pkgs[tt.want]) {
			t.Errorf("Fetch(%q) = %+v, want version %s digest of its package", tt.version, got, tt.want)
		}
	}
	srv.Close() // offline from here: Lookup reads the cache only
	for _, tt := range tests {
		got, err := c.Lookup(Source{Type: "http", URL: srv.URL, Chart: "podinfo", Version: tt.version})
		if err != nil || got.Version != tt.want {
			t.Errorf("Lookup(%q) = %+v, %v; want %s", tt.version, got, err, tt.want)
			continue
		}
		if ch, err := loader.Load(got.Path); err != nil || ch.Metadata.Version != tt.want {
			t.Errorf("cached chart %s does not load as %s: %v", got.Path, tt.want, err)
		}
	}
	if _, err := c.Lookup(Source{Type: "http", URL: srv.URL, Chart: "podinfo", Version: "7.x"}); err == nil || IsNotCached(err) {
		t.Errorf("Lookup(7.x) = %v, want a resolution error (no such version), not a miss", err)
	}
	if _, err := c.Lookup(Source{Type: "http", URL: "https://elsewhere.example", Chart: "podinfo"}); !IsNotCached(err) {
		t.Errorf("Lookup of an unfetched repository = %v, want ErrNotCached", err)
	}
}

func TestFetchVerifiesDigests(t *testing.T) {
	srv, _ := helmRepo(t, true)
	c := &Cache{Dir: t.TempDir()}
	f := &Fetcher{Cache: c, RepositoryConfig: filepath.Join(t.TempDir(), "none.yaml")}
	_, err := f.Fetch(Source{Type: "http", URL: srv.URL, Chart: "podinfo", Version: "6.14.1"})
	if err == nil || !strings.Contains(err.Error(), "digest mismatch") {
		t.Fatalf("Fetch with a lying index = %v, want a digest mismatch", err)
	}
	if _, err := c.Lookup(Source{Type: "http", URL: srv.URL, Chart: "podinfo", Version: "6.14.1"}); !IsNotCached(err) {
		t.Errorf("a chart that failed its digest is cached: %v", err)
	}
	// A blob changed on disk after it was stored is a miss, never read.
	if _, err := f.Fetch(Source{Type: "http", URL: srv.URL, Chart: "podinfo", Version: "6.15.0-rc.1"}); err != nil {
		t.Fatal(err)
	}
	got, err := c.Lookup(Source{Type: "http", URL: srv.URL, Chart: "podinfo", Version: "6.15.0-rc.1"})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(got.Path, []byte("torn"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Lookup(Source{Type: "http", URL: srv.URL, Chart: "podinfo", Version: "6.15.0-rc.1"}); !IsNotCached(err) {
		t.Errorf("Lookup of a damaged blob = %v, want ErrNotCached", err)
	}
}

func TestFetchOCI(t *testing.T) {
	_, host, manifestDigest, pkg := ociRegistry(t)
	c := &Cache{Dir: t.TempDir()}
	f := &Fetcher{Cache: c, RegistryConfig: filepath.Join(t.TempDir(), "config.json")}
	url := "oci://" + host
	tests := []struct {
		name string
		src  Source
		want string
	}{
		{"tag", Source{Type: "oci", URL: url, Tag: "6.14.1", PlainHTTP: true}, "6.14.1"},
		{"semver", Source{Type: "oci", URL: url, Version: "6.14.x", PlainHTTP: true}, "6.14.1"},
		{"latest stable", Source{Type: "oci", URL: url, Version: "*", PlainHTTP: true}, "6.15.0"},
		{"digest", Source{Type: "oci", URL: url, Digest: manifestDigest, PlainHTTP: true}, "6.14.1"},
	}
	for _, tt := range tests {
		got, err := f.Fetch(tt.src)
		if err != nil {
			t.Fatalf("%s: Fetch: %v", tt.name, err)
		}
		ch, err := loader.Load(got.Path)
		if err != nil || ch.Metadata.Version != tt.want {
			t.Errorf("%s: fetched %+v (%v), want version %s", tt.name, got, err, tt.want)
		}
		if tt.want == "6.14.1" && got.Digest != "sha256:"+sha(pkg) {
			t.Errorf("%s: digest %s, want the pushed layer's", tt.name, got.Digest)
		}
		if again, err := c.Lookup(tt.src); err != nil || again.Digest != got.Digest {
			t.Errorf("%s: Lookup = %+v, %v; want the fetched chart", tt.name, again, err)
		}
	}
	// insecure (plain HTTP) only where the source says so.
	if _, err := f.Fetch(Source{Type: "oci", URL: url, Tag: "6.15.0"}); err == nil {
		t.Errorf("Fetch over plain HTTP without insecure succeeded")
	}
}

func TestTrim(t *testing.T) {
	c := &Cache{Dir: t.TempDir(), MaxBytes: 10}
	old, err := c.putBlob([]byte("old blob"), "")
	if err != nil {
		t.Fatal(err)
	}
	p, _ := c.blobPath(old)
	past := time.Now().Add(-time.Hour)
	os.Chtimes(p, past, past)
	kept, _ := c.putBlob([]byte("new blob"), "")
	c.putRef("index a", old, "")
	c.putRef("index b", kept, "")
	if err := c.Trim(nil); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.lookup("index a"); !IsNotCached(err) {
		t.Errorf("the least recently used blob was kept: %v", err)
	}
	if _, _, err := c.lookup("index b"); err != nil {
		t.Errorf("the recent blob went: %v", err)
	}
}

func TestResolveTags(t *testing.T) {
	tags := []string{"6.15.0", "6.14.1", "6.14.0", "7.0.0-rc.1", "latest", "6.13.0+build.1"}
	tests := []struct{ ver, filter, want string }{
		{"", "", "6.15.0"},
		{"*", "", "6.15.0"},
		{"6.14.x", "", "6.14.1"},
		{">=7.0.0-0", "", "7.0.0-rc.1"},
		{"latest", "", "latest"}, // an exact tag first
		{"*", `^6\.14`, "6.14.1"},
		{"<6.14.0", "", "6.13.0+build.1"},
	}
	for _, tt := range tests {
		got, err := ResolveTags(tags, tt.ver, tt.filter)
		if err != nil || got != tt.want {
			t.Errorf("ResolveTags(%q, %q) = %q, %v; want %q", tt.ver, tt.filter, got, err, tt.want)
		}
	}
	if _, err := ResolveTags(tags, "9.x", ""); err == nil {
		t.Errorf("ResolveTags(9.x) found a tag")
	}
}
