package charts

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"

	"github.com/Masterminds/semver/v3"
	repo "helm.sh/helm/v4/pkg/repo/v1"
)

// Keys of the refs. A URL is kept as written but for a trailing slash.
func trimURL(u string) string          { return strings.TrimSuffix(u, "/") }
func indexKey(url string) string       { return "index " + trimURL(url) }
func tagsKey(url string) string        { return "tags " + trimURL(url) }
func ociTagKey(url, tag string) string { return "oci " + trimURL(url) + ":" + tag }
func ociDigestKey(url, d string) string {
	return "oci " + trimURL(url) + "@" + d
}
func chartKey(url, name, version string) string {
	return "chart " + trimURL(url) + " " + name + " " + version
}

// Lookup finds the chart version src resolves to in the cache, offline:
// an HTTP repository's version constraint against its cached index, an
// OCI constraint against its cached tags, as source-controller resolves
// them. The error wraps ErrNotCached when `kiln fetch` would help.
func (c *Cache) Lookup(src Source) (Chart, error) {
	switch src.Type {
	case "http":
		idx, err := c.index(src.URL)
		if err != nil {
			return Chart{}, err
		}
		cv, err := ResolveIndex(idx, src.Chart, src.Version)
		if err != nil {
			return Chart{}, err
		}
		p, r, err := c.lookup(chartKey(src.URL, src.Chart, cv.Version))
		if err != nil {
			return Chart{}, fmt.Errorf("chart %s version %s: %w", src.Chart, cv.Version, err)
		}
		return Chart{Path: p, Digest: r.Digest, Version: cv.Version}, nil
	case "oci":
		key, version, err := c.ociKey(src)
		if err != nil {
			return Chart{}, err
		}
		p, r, err := c.lookup(key)
		if err != nil {
			return Chart{}, err
		}
		if r.Version != "" {
			version = r.Version
		}
		return Chart{Path: p, Digest: r.Digest, Version: version}, nil
	}
	return Chart{}, fmt.Errorf("unknown chart source type %q", src.Type)
}

// ociKey is the ref an OCI source resolves to offline, and its version.
func (c *Cache) ociKey(src Source) (string, string, error) {
	switch {
	case src.Digest != "":
		return ociDigestKey(src.URL, src.Digest), src.Digest, nil
	case src.Version != "":
		tags, err := c.tags(src.URL)
		if err != nil {
			return "", "", err
		}
		v, err := ResolveTags(tags, src.Version, src.SemverFilter)
		if err != nil {
			return "", "", err
		}
		return ociTagKey(src.URL, v), v, nil
	default:
		return ociTagKey(src.URL, orLatest(src.Tag)), orLatest(src.Tag), nil
	}
}

func (c *Cache) index(url string) (*repo.IndexFile, error) {
	p, _, err := c.lookup(indexKey(url))
	if err != nil {
		return nil, fmt.Errorf("the index of %s: %w", url, err)
	}
	idx, err := repo.LoadIndexFile(p)
	if err != nil {
		return nil, fmt.Errorf("the index of %s: %v", url, err)
	}
	return idx, nil
}

func (c *Cache) tags(url string) ([]string, error) {
	p, _, err := c.lookup(tagsKey(url))
	if err != nil {
		return nil, fmt.Errorf("the tags of %s: %w", url, err)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return nil, err
	}
	var tags []string
	if err := json.Unmarshal(data, &tags); err != nil {
		return nil, fmt.Errorf("the tags of %s: %v", url, err)
	}
	return tags, nil
}

// ResolveIndex picks the chart version of name that ver selects in an
// index, as source-controller's ChartRepository.GetChartVersion does: an
// exact version string first; else "" and "*" are the latest stable
// version and anything else a semver constraint; the highest matching
// version wins, the later created among equal ones.
func ResolveIndex(idx *repo.IndexFile, name, ver string) (*repo.ChartVersion, error) {
	cvs, ok := idx.Entries[name]
	if !ok {
		return nil, fmt.Errorf("no chart named %q in the repository index", name)
	}
	if len(cvs) == 0 {
		return nil, fmt.Errorf("chart %q has no versions in the repository index", name)
	}
	if ver != "" {
		for _, cv := range cvs {
			if cv.Version == ver {
				return cv, nil
			}
		}
	}
	constraint, err := semverConstraint(ver)
	if err != nil {
		return nil, err
	}
	type match struct {
		v  *semver.Version
		cv *repo.ChartVersion
	}
	var matched []match
	for _, cv := range cvs {
		v, err := semver.NewVersion(cv.Version)
		if err != nil || !constraint.Check(v) {
			continue
		}
		matched = append(matched, match{v, cv})
	}
	if len(matched) == 0 {
		return nil, fmt.Errorf("no %q chart with version matching %q in the repository index", name, ver)
	}
	sort.SliceStable(matched, func(i, j int) bool {
		l, r := matched[i], matched[j]
		if !l.v.Equal(r.v) {
			return r.v.LessThan(l.v)
		}
		return r.cv.Created.Before(l.cv.Created)
	})
	return matched[0].cv, nil
}

// ResolveTags picks the tag ver selects among an OCI repository's tags,
// as source-controller does for an OCI HelmRepository's chart version and
// an OCIRepository's ref.semver (with ref.semverFilter): an exact tag
// first, else the highest version matching the constraint ("" and "*":
// the latest stable).
func ResolveTags(tags []string, ver, filter string) (string, error) {
	if filter != "" {
		re, err := regexp.Compile(filter)
		if err != nil {
			return "", fmt.Errorf("semverFilter %q: %v", filter, err)
		}
		var kept []string
		for _, t := range tags {
			if re.MatchString(t) {
				kept = append(kept, t)
			}
		}
		tags = kept
	}
	if ver != "" {
		for _, t := range tags {
			if t == ver {
				return t, nil
			}
		}
	}
	constraint, err := semverConstraint(ver)
	if err != nil {
		return "", err
	}
	var matched semver.Collection
	for _, t := range tags {
		v, err := semver.NewVersion(t)
		if err != nil || !constraint.Check(v) {
			continue
		}
		matched = append(matched, v)
	}
	if len(matched) == 0 {
		return "", fmt.Errorf("no tag matches version %q", ver)
	}
	sort.Sort(sort.Reverse(matched))
	return matched[0].Original(), nil
}

func semverConstraint(ver string) (*semver.Constraints, error) {
	if ver == "" || ver == "*" {
		return semver.NewConstraint("*")
	}
	c, err := semver.NewConstraint(ver)
	if err != nil {
		return nil, fmt.Errorf("version %q is not a semver constraint: %v", ver, err)
	}
	return c, nil
}

// IsNotCached reports whether err says `kiln fetch` has not stored
// something a source needs.
func IsNotCached(err error) bool { return errors.Is(err, ErrNotCached) }
