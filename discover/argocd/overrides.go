package argocd

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/kilnhq/kiln/internal/pathkey"
	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	sigsyaml "sigs.k8s.io/yaml"
)

// Argo CD's parameter override files in a source's path
// (reposerver/repository: repoSourceFile, appSourceFile).
const (
	repoSourceFile = ".argocd-source.yaml"
	appSourceFile  = ".argocd-source-%s.yaml"
)

// withOverrides merges the override files of a source's path into the
// source as the repo-server's mergeSourceParameters does: .argocd-source.yaml,
// then .argocd-source-<app>.yaml, each a JSON merge patch (RFC 7386) of
// the source, of which only the tools' settings count (chart, path,
// repoURL and targetRevision stay the Application's). It returns srcs
// unchanged when there is no override file, else a copy with source i
// merged and the files read.
func withOverrides(srcs []source, i int, dir, app string) ([]source, []string, error) {
	var files []string
	for _, name := range []string{repoSourceFile, fmt.Sprintf(appSourceFile, app)} {
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			files = append(files, p)
		} else if err != nil && !os.IsNotExist(err) {
			return nil, nil, err
		}
	}
	if len(files) == 0 {
		return srcs, nil, nil
	}
	orig := srcs[i]
	merged := orig
	for _, f := range files {
		m, err := mergeOverride(merged, f)
		if err != nil {
			return nil, nil, fmt.Errorf("error while parsing source parameters: %s: %v", shown(f), err)
		}
		merged = m
	}
	merged.Chart, merged.Path, merged.RepoURL, merged.TargetRevision = orig.Chart, orig.Path, orig.RepoURL, orig.TargetRevision
	merged.overrides = files
	out := slices.Clone(srcs)
	out[i] = merged
	return out, files, nil
}

// mergeOverride applies one override file to a source.
func mergeOverride(s source, file string) (source, error) {
	data, err := json.Marshal(s)
	if err != nil {
		return s, err
	}
	patch, err := os.ReadFile(file)
	if err != nil {
		return s, err
	}
	if patch, err = sigsyaml.YAMLToJSON(patch); err != nil {
		return s, err
	}
	if data, err = jsonpatch.MergePatch(data, patch); err != nil {
		return s, err
	}
	var out source
	if err := json.Unmarshal(data, &out); err != nil {
		return s, err
	}
	return out, nil
}

// consumeOverrides marks the override files read as linted through the
// Application (they are hidden files, which discovery never lints, but a
// path named as input may be one).
func (r *run) consumeOverrides(files []string) {
	for _, f := range files {
		r.out.Consumed[pathkey.Real(f)] = true
	}
}
