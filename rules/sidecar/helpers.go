package sidecar

import (
	_ "embed"
	"fmt"
	"strings"

	"github.com/kilnhq/kiln/manifest"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

//go:embed helpers.yaml
var helpersYAML []byte

// helper is one entry of helpers.yaml.
type helper struct {
	What   string   `yaml:"what"`
	Source string   `yaml:"source"`
	Images []string `yaml:"images"`
}

// helpers is the table of long-running helper images, read once at init.
var helpers = mustLoadHelpers(helpersYAML)

func mustLoadHelpers(data []byte) []helper {
	var doc struct {
		Helpers []helper `yaml:"helpers"`
	}
	if err := yaml.Unmarshal(data, &doc); err != nil {
		panic(fmt.Sprintf("sidecar: helpers.yaml: %v", err))
	}
	for _, h := range doc.Helpers {
		if h.What == "" || h.Source == "" || len(h.Images) == 0 {
			panic(fmt.Sprintf("sidecar: helpers.yaml: entry %+v needs what, source and images", h))
		}
	}
	return doc.Helpers
}

// KnownHelper returns what long-running helper an image is ("Envoy proxy"), or "".
func KnownHelper(image string) string {
	repo := manifest.ImageRepository(image)
	if repo == "" {
		return ""
	}
	last := repo[strings.LastIndexByte(repo, '/')+1:]
	for _, h := range helpers {
		for _, name := range h.Images {
			if strings.Contains(name, "/") {
				if repo == name || strings.HasSuffix(repo, "/"+name) {
					return h.What
				}
			} else if last == name {
				return h.What
			}
		}
	}
	return ""
}

// Helper is one entry of the helper-image table: what it is and the image
// names that identify it (see helpers.yaml for how names match).
type Helper struct {
	What   string
	Images []string
}

// Helpers returns the helper-image table in its order (the first match wins).
func Helpers() []Helper {
	out := make([]Helper, len(helpers))
	for i, h := range helpers {
		out[i] = Helper{What: h.What, Images: append([]string(nil), h.Images...)}
	}
	return out
}
