package manifest

import (
	"fmt"
	"strconv"
	"strings"
)

// KubeVersion is a Kubernetes minor release, e.g. 1.31.
type KubeVersion struct{ Major, Minor int }

// LatestKube is the newest Kubernetes minor kiln knows (the version of the
// k8s.io libraries it links); OldestKube the oldest it judges.
var (
	LatestKube = KubeVersion{1, 37}
	OldestKube = KubeVersion{1, 16}
)

// ParseKubeVersion accepts "1.31", "v1.31" and "v1.31.4" (the patch is ignored).
func ParseKubeVersion(s string) (KubeVersion, error) {
	t := strings.TrimPrefix(strings.TrimSpace(s), "v")
	parts := strings.Split(t, ".")
	if len(parts) < 2 || len(parts) > 3 {
		return KubeVersion{}, fmt.Errorf("invalid Kubernetes version %q: want MAJOR.MINOR, e.g. 1.31", s)
	}
	maj, err1 := strconv.Atoi(parts[0])
	min, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil || maj != 1 || min < 0 {
		return KubeVersion{}, fmt.Errorf("invalid Kubernetes version %q: want MAJOR.MINOR, e.g. 1.31", s)
	}
	if len(parts) == 3 {
		if _, err := strconv.Atoi(parts[2]); err != nil {
			return KubeVersion{}, fmt.Errorf("invalid Kubernetes version %q: want MAJOR.MINOR, e.g. 1.31", s)
		}
	}
	return KubeVersion{maj, min}, nil
}

// String formats the version as 1.31.
func (v KubeVersion) String() string { return fmt.Sprintf("%d.%d", v.Major, v.Minor) }

// Less reports whether v is older than w.
func (v KubeVersion) Less(w KubeVersion) bool {
	if v.Major != w.Major {
		return v.Major < w.Major
	}
	return v.Minor < w.Minor
}

// AtLeast reports whether v is w or newer.
func (v KubeVersion) AtLeast(w KubeVersion) bool { return !v.Less(w) }
