// Package charts is kiln's chart cache: the chart versions, repository
// indexes and registry tag lists that `kiln fetch` downloads (the only
// network access kiln has) and that rendering reads offline.
//
// Everything is content-addressed: blobs/sha256/<hex> holds bytes whose
// SHA-256 is their name (checked when read), and refs/<hex of the key>
// names the blob a key stands for ("index https://…", "chart https://…
// podinfo 6.14.1", "oci oci://host/repo:tag"). Both are written atomically
// (internal/atomicfile), so a reader sees a whole entry or none; the cache
// is trimmed to a size bound after each fetch, least recently used first.
package charts

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/kilnhq/kiln/internal/atomicfile"
)

// Source is where one chart comes from, as a Flux source (HelmRepository,
// OCIRepository, a HelmRelease's chart.spec) or an Argo CD chart source
// names it.
type Source struct {
	// Type is "http" (a Helm repository served with an index.yaml) or
	// "oci" (a chart in an OCI registry).
	Type string
	// URL is the HTTP repository's URL, or the OCI repository that holds
	// the chart ("oci://host/path/chart").
	URL string
	// Chart is the chart's name in an HTTP repository ("" for OCI).
	Chart string
	// Version is a version or semver constraint, resolved against the
	// index or the tags ("" and "*": the latest stable version).
	Version string
	// Tag and Digest pin an OCI chart (an OCIRepository's ref.tag and
	// ref.digest); Digest wins over Version, Version over Tag.
	Tag, Digest string
	// SemverFilter keeps only the OCI tags it matches before Version is
	// resolved (an OCIRepository's ref.semverFilter).
	SemverFilter string
	// PlainHTTP talks to an OCI registry over plain HTTP, and
	// InsecureSkipTLSVerify accepts any certificate: only where the
	// source says so (`insecure: true`).
	PlainHTTP, InsecureSkipTLSVerify bool
	// SecretRef names the Flux source whose spec.secretRef holds its
	// credentials ("HelmRepository ns/name, Secret regcred"): kiln cannot
	// read cluster Secrets, so kiln fetch says so and takes credentials
	// from Helm's and Docker's config and the environment instead.
	SecretRef string
}

// String names the source as a user would write it.
func (s Source) String() string {
	switch {
	case s.Type == "http":
		v := s.Version
		if v == "" {
			v = "*"
		}
		return s.URL + " chart " + s.Chart + " version " + v
	case s.Digest != "":
		return s.URL + "@" + s.Digest
	case s.Version != "":
		return s.URL + " version " + s.Version
	default:
		return s.URL + ":" + orLatest(s.Tag)
	}
}

func orLatest(tag string) string {
	if tag == "" {
		return "latest"
	}
	return tag
}

// Chart is a chart version found in the cache.
type Chart struct {
	// Path is the packaged chart (.tgz) in the cache.
	Path string
	// Digest is its content's "sha256:<hex>".
	Digest string
	// Version is the version the source's constraint resolved to (the
	// tag or digest for an OCI chart pinned so).
	Version string
}

// ErrNotCached is returned (wrapped) for a chart, index or tag list
// `kiln fetch` has not stored.
var ErrNotCached = errors.New("not fetched")

// DefaultMaxBytes bounds the cache's size (blobs) after a fetch.
const DefaultMaxBytes = 2 << 30

// Cache is the chart cache in one directory.
type Cache struct {
	Dir string
	// MaxBytes bounds the blobs' total size (DefaultMaxBytes if 0).
	MaxBytes int64
}

// DefaultDir is $XDG_CACHE_HOME/kiln/charts (os.UserCacheDir's rules).
func DefaultDir() (string, error) {
	base, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(base, "kiln", "charts"), nil
}

// Open returns the cache in dir ("": DefaultDir). Nothing is created
// until something is stored.
func Open(dir string) (*Cache, error) {
	if dir == "" {
		d, err := DefaultDir()
		if err != nil {
			return nil, err
		}
		dir = d
	}
	return &Cache{Dir: dir}, nil
}

func keyHex(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

func (c *Cache) blobPath(digest string) (string, error) {
	hexd, ok := strings.CutPrefix(digest, "sha256:")
	if !ok || len(hexd) != 64 || strings.Trim(hexd, "0123456789abcdef") != "" {
		return "", fmt.Errorf("digest %q is not sha256:<64 hex digits>", digest)
	}
	return filepath.Join(c.Dir, "blobs", "sha256", hexd), nil
}

// ref is what refs/<key> holds.
type ref struct {
	Key     string `json:"key"`
	Digest  string `json:"digest"`
	Version string `json:"version,omitempty"`
}

// putBlob stores data under its digest, checking it equals want when
// want is given ("sha256:…": the digest the index or the registry gave).
func (c *Cache) putBlob(data []byte, want string) (string, error) {
	sum := sha256.Sum256(data)
	digest := "sha256:" + hex.EncodeToString(sum[:])
	if want != "" && !strings.EqualFold(want, digest) && !strings.EqualFold("sha256:"+want, digest) {
		return "", fmt.Errorf("digest mismatch: the source says %s, the bytes are %s", want, digest)
	}
	p, _ := c.blobPath(digest)
	if _, err := os.Stat(p); err == nil {
		now := time.Now()
		_ = os.Chtimes(p, now, now)
		return digest, nil
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return "", err
	}
	return digest, atomicfile.WriteFile(p, data, 0o644)
}

// putRef names the blob digest by key.
func (c *Cache) putRef(key, digest, version string) error {
	p := filepath.Join(c.Dir, "refs", keyHex(key))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	data, _ := json.Marshal(ref{Key: key, Digest: digest, Version: version})
	return atomicfile.WriteFile(p, data, 0o644)
}

// lookup returns the blob a key names: its path, digest and version,
// verified against its digest.
func (c *Cache) lookup(key string) (string, ref, error) {
	data, err := os.ReadFile(filepath.Join(c.Dir, "refs", keyHex(key)))
	if errors.Is(err, fs.ErrNotExist) {
		return "", ref{}, ErrNotCached
	}
	if err != nil {
		return "", ref{}, err
	}
	var r ref
	if err := json.Unmarshal(data, &r); err != nil || r.Key != key {
		return "", ref{}, fmt.Errorf("%w (entry %s is damaged: run `kiln fetch`)", ErrNotCached, keyHex(key))
	}
	p, err := c.blobPath(r.Digest)
	if err != nil {
		return "", ref{}, err
	}
	blob, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return "", ref{}, ErrNotCached
	}
	if err != nil {
		return "", ref{}, err
	}
	sum := sha256.Sum256(blob)
	if "sha256:"+hex.EncodeToString(sum[:]) != r.Digest {
		return "", ref{}, fmt.Errorf("%w (blob %s does not match its digest: run `kiln fetch`)", ErrNotCached, r.Digest)
	}
	return p, r, nil
}

// Trim removes the least recently used blobs (and the refs naming them)
// until the blobs fit in MaxBytes, keeping those in keep (digests).
func (c *Cache) Trim(keep map[string]bool) error {
	limit := c.MaxBytes
	if limit <= 0 {
		limit = DefaultMaxBytes
	}
	dir := filepath.Join(c.Dir, "blobs", "sha256")
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	type blob struct {
		name string
		size int64
		used time.Time
	}
	var blobs []blob
	var total int64
	for _, e := range entries {
		info, err := e.Info()
		if err != nil || !info.Mode().IsRegular() {
			continue
		}
		blobs = append(blobs, blob{e.Name(), info.Size(), info.ModTime()})
		total += info.Size()
	}
	if total <= limit {
		return nil
	}
	sort.Slice(blobs, func(i, j int) bool {
		if !blobs[i].used.Equal(blobs[j].used) {
			return blobs[i].used.Before(blobs[j].used)
		}
		return blobs[i].name < blobs[j].name
	})
	removed := map[string]bool{}
	for _, b := range blobs {
		if total <= limit {
			break
		}
		if keep["sha256:"+b.name] {
			continue
		}
		if err := os.Remove(filepath.Join(dir, b.name)); err == nil {
			total -= b.size
			removed["sha256:"+b.name] = true
		}
	}
	refs, _ := os.ReadDir(filepath.Join(c.Dir, "refs"))
	for _, e := range refs {
		p := filepath.Join(c.Dir, "refs", e.Name())
		data, err := os.ReadFile(p)
		var r ref
		if err == nil && json.Unmarshal(data, &r) == nil && removed[r.Digest] {
			os.Remove(p)
		}
	}
	return nil
}
