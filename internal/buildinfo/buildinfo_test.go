package buildinfo

import (
	"runtime/debug"
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
		bi                  *debug.BuildInfo
		wantVer, wantCom    string
	}{
		{name: "make build: linker values win", ldVersion: "v0.1.0-3-g4b96001", ldCommit: "4b96001",
			bi: info("(devel)", "vcs.revision", rev), wantVer: "v0.1.0-3-g4b96001", wantCom: "4b96001"},
		{name: "go install @tag: module version, no VCS stamp", bi: info("v0.1.0"), wantVer: "v0.1.0", wantCom: "unknown"},
		{name: "go install @commit: pseudo-version names the commit", bi: info("v0.0.0-20261201201146-4b96001f0e1d"),
			wantVer: "v0.0.0-20261201201146-4b96001f0e1d", wantCom: "4b96001f0e1d"},
		{name: "pseudo-version after a tag", bi: info("v0.1.1-0.20261201201146-4b96001f0e1d"),
			wantVer: "v0.1.1-0.20261201201146-4b96001f0e1d", wantCom: "4b96001f0e1d"},
		{name: "go build in a checkout", bi: info("(devel)", "vcs.revision", rev, "vcs.modified", "false"),
			wantVer: "dev", wantCom: "4b96001f0e1d"},
		{name: "go build in a dirty checkout, version stamped by Go", bi: info("v0.1.1-0.20261201201146-4b96001f0e1d+dirty", "vcs.revision", rev, "vcs.modified", "true"),
			wantVer: "v0.1.1-0.20261201201146-4b96001f0e1d+dirty", wantCom: "4b96001f0e1d-dirty"},
		{name: "a prerelease tag is no pseudo-version", bi: info("v0.2.0-rc.1"), wantVer: "v0.2.0-rc.1", wantCom: "unknown"},
		{name: "no build info", wantVer: "dev", wantCom: "unknown"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ver, com := Resolve(tt.ldVersion, tt.ldCommit, tt.bi)
			if ver != tt.wantVer || com != tt.wantCom {
				t.Errorf("got %q, %q; want %q, %q", ver, com, tt.wantVer, tt.wantCom)
			}
		})
	}
}
