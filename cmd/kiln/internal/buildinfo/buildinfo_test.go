package buildinfo

import (
	"regexp"
	"runtime/debug"
	"strings"
	"testing"
)

func TestResolveVersion(t *testing.T) {
	info := func(ver string, settings ...string) *debug.BuildInfo {
		bi := &debug.BuildInfo{Main: debug.Module{Path: "github.com/kilnhq/kiln", Version: ver}}
		for i := 0; i+1 < len(settings); i += 2 {
			bi.Settings = append(bi.Settings, debug.BuildSetting{Key: settings[i], Value: settings[i+1]})
		}
		return bi
	}
	const rev = "4b96001f0e1d2c3b4a5968778695a4b3c2d1e0f1"
	tests := []struct {
		name                string
		ldVersion, ldCommit string
		file                string
		bi                  *debug.BuildInfo
		wantVer, wantCom    string
	}{
		{name: "make build: linker values win", ldVersion: "v0.1.0-3-g4b96001", ldCommit: "4b96001",
			bi: info("(devel)", "vcs.revision", rev), wantVer: "v0.1.0-3-g4b96001", wantCom: "4b96001"},
		{name: "go install @tag: module version, no VCS stamp", bi: info("v0.1.0"), wantVer: "v0.1.0", wantCom: "unknown"},
		{name: "go install @commit: the file's version, the pseudo-version's commit", file: "v0.2.0-dev\n", bi: info("v0.0.0-20261201201146-4b96001f0e1d"),
			wantVer: "v0.2.0-dev", wantCom: "4b96001f0e1d"},
		{name: "pseudo-version after a tag", file: "v0.2.0-dev", bi: info("v0.1.1-0.20261201201146-4b96001f0e1d"),
			wantVer: "v0.2.0-dev", wantCom: "4b96001f0e1d"},
		{name: "go build in a checkout", file: "v0.2.0-dev\n", bi: info("(devel)", "vcs.revision", rev, "vcs.modified", "false"),
			wantVer: "v0.2.0-dev", wantCom: "4b96001f0e1d"},
		{name: "go build in a dirty checkout, version stamped by Go", file: "v0.2.0-dev", bi: info("v0.1.1-0.20261201201146-4b96001f0e1d+dirty", "vcs.revision", rev, "vcs.modified", "true"),
			wantVer: "v0.2.0-dev", wantCom: "4b96001f0e1d-dirty"},
		{name: "a prerelease tag is no pseudo-version", file: "v0.2.0-dev", bi: info("v0.2.0-rc.1"), wantVer: "v0.2.0-rc.1", wantCom: "unknown"},
		{name: "no build info", file: "v0.2.0-dev", wantVer: "v0.2.0-dev", wantCom: "unknown"},
		{name: "no build info, no version file", wantVer: "dev", wantCom: "unknown"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ver, com := Resolve(tt.ldVersion, tt.ldCommit, tt.file, tt.bi)
			if ver != tt.wantVer || com != tt.wantCom {
				t.Errorf("got %q, %q; want %q, %q", ver, com, tt.wantVer, tt.wantCom)
			}
		})
	}
}

// The tree's version file holds one semantic version: a release, or the
// next one with -dev.
func TestVersionFile(t *testing.T) {
	v := strings.TrimSpace(File)
	if !regexp.MustCompile(`^v\d+\.\d+\.\d+(-dev)?$`).MatchString(v) || strings.Count(File, "\n") != 1 {
		t.Errorf("VERSION is %q; want one line vX.Y.Z or vX.Y.Z-dev", File)
	}
}
