package discover

import (
	"os"
	"regexp"
	"strings"

	"github.com/kilnhq/kiln/internal/yamlnode"
	"github.com/kilnhq/kiln/manifest"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

var (
	accumulating = regexp.MustCompile(`accumulating resources from '([^']*)'`)
	notFound     = regexp.MustCompile(`no such file or directory|not a valid directory|does not exist`)
)

// missingResource explains kustomize's error for a resources entry that
// names nothing on disk ("accumulating resources: accumulation
// err='accumulating resources from 'missing.yaml': evalsymlink failure
// ... lstat missing.yaml: no such file or directory': must build at
// directory: ..."): at the entry of the kustomization file (file) that
// leads to it, in plain words. ok is false for any other error.
func missingResource(file string, err error) (*manifest.Error, bool) {
	msg := plainKustomizeError(err)
	chain := accumulating.FindAllStringSubmatch(msg, -1)
	if len(chain) == 0 || !notFound.MatchString(msg) {
		return nil, false
	}
	entry, missing := chain[0][1], chain[len(chain)-1][1]
	pos := manifest.Position{File: file, Line: 1, Column: 1}
	if data, rerr := os.ReadFile(file); rerr == nil {
		if n := listEntry(data, entry); n != nil {
			pos.Line, pos.Column = n.Line, n.Column
		}
	}
	what := "resource " + quote(entry) + " names no file or directory"
	if missing != entry {
		what = "resource " + quote(entry) + " cannot be built: its resource " + quote(missing) + " names no file or directory"
	}
	return &manifest.Error{Pos: pos, Msg: "kustomize build failed: " + what + "; fix the path or remove the entry"}, true
}

func quote(s string) string { return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"` }

// listEntry finds the node of an entry of a kustomization's resources,
// bases or components list, nil when there is none.
func listEntry(data []byte, entry string) *yaml.Node {
	var doc yaml.Node
	if yaml.Unmarshal(data, &doc) != nil || len(doc.Content) == 0 {
		return nil
	}
	for _, key := range []string{"resources", "bases", "components"} {
		seq := yamlnode.Value(doc.Content[0], key)
		if seq == nil || seq.Kind != yaml.SequenceNode {
			continue
		}
		for _, n := range seq.Content {
			if n.Kind == yaml.ScalarNode && n.Value == entry {
				return n
			}
		}
	}
	return nil
}
