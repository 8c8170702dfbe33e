// Package buildinfo says which kiln a binary is: its version and commit,
// from the linker's values (make build, make release), the module version Go
// records for `go install …@vX.Y.Z`, or the version file of the tree it was
// built from (VERSION: the release it is, or the next one with "-dev"), and
// the commit from Go's version control stamp.
package buildinfo

import (
	_ "embed"
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/kilnhq/kiln/manifest"
)

// Describe is what kiln version and kiln --version print.
func Describe(version, commit string) string {
	return fmt.Sprintf("kiln %s (commit %s, %s %s/%s)\nKubernetes %s to %s (default target %s)\n",
		version, commit, runtime.Version(), runtime.GOOS, runtime.GOARCH,
		manifest.OldestKube, manifest.LatestKube, manifest.LatestKube)
}

// File is the version the tree declares (the file VERSION beside this one):
// the release a tagged tree is, or the next release with "-dev" between
// releases. make build, make release and make image read it too.
//
//go:embed VERSION
var File string

// Resolve picks the version and commit to report: the linker's values
// first; then a release's module version (go install …@vX.Y.Z); then the
// tree's version file (fileVersion), also for the pseudo-version Go stamps
// on a build in a checkout or a go install …@commit, whose commit it
// reports; "dev" and "unknown" when nothing says.
func Resolve(ldVersion, ldCommit, fileVersion string, bi *debug.BuildInfo) (ver, com string) {
	ver, com = ldVersion, ldCommit
	if bi != nil {
		if v := bi.Main.Version; ver == "" && v != "" && v != "(devel)" && pseudoVersionCommit(v) == "" {
			ver = v
		}
		if com == "" {
			var rev string
			var dirty bool
			for _, s := range bi.Settings {
				switch s.Key {
				case "vcs.revision":
					rev = s.Value
				case "vcs.modified":
					dirty = s.Value == "true"
				}
			}
			if rev != "" {
				com = shortCommit(rev)
				if dirty {
					com += "-dirty"
				}
			} else if h := pseudoVersionCommit(bi.Main.Version); h != "" {
				com = h
			}
		}
	}
	if ver == "" {
		ver = strings.TrimSpace(fileVersion)
	}
	if ver == "" {
		ver = "dev"
	}
	if com == "" {
		com = "unknown"
	}
	return ver, com
}

// shortCommit abbreviates a full revision to 12 hex digits, as Go's pseudo-versions do.
func shortCommit(rev string) string {
	if len(rev) > 12 {
		return rev[:12]
	}
	return rev
}

// pseudoVersionCommit is the commit a Go pseudo-version names
// (v0.0.0-20261201201146-4b96001abcde → 4b96001abcde), else "".
func pseudoVersionCommit(v string) string {
	v, _, _ = strings.Cut(v, "+")
	i := strings.LastIndexByte(v, '-')
	if i < 0 || len(v)-i-1 != 12 {
		return ""
	}
	h := v[i+1:]
	if strings.Trim(h, "0123456789abcdef") != "" {
		return ""
	}
	// The part before the hash must end in a 14-digit timestamp.
	ts := v[:i]
	if j := strings.LastIndexAny(ts, "-."); j >= 0 {
		ts = ts[j+1:]
	}
	if len(ts) != 14 || strings.Trim(ts, "0123456789") != "" {
		return ""
	}
	return h
}
