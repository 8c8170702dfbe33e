package discover

import (
	"bytes"
	"os"

	"github.com/kilnhq/kiln/manifest"
)

// Marks are what one read of a plain file's bytes found: the markers a
// controller, or HelmRelease rendering, looks for before it parses a file
// (most files of a repository hold none of them). Each file is read for
// them once per discovery.
type Marks uint8

const (
	// MarkToolkit: a Flux toolkit API group (toolkit.fluxcd.io).
	MarkToolkit Marks = 1 << iota
	// MarkHelmRelease: helm-controller's group (helm.toolkit.fluxcd.io).
	MarkHelmRelease
	// MarkFluxExtra: the Flux Operator's or the source extensions' group
	// (fluxcd.controlplane.io, source.extensions.fluxcd.io).
	MarkFluxExtra
	// MarkConfig: a ConfigMap or a Secret.
	MarkConfig
)

// markers are the bytes each mark stands for.
var markers = []struct {
	mark Marks
	text []byte
}{
	{MarkToolkit, []byte("toolkit.fluxcd.io")},
	{MarkHelmRelease, []byte("helm.toolkit.fluxcd.io")},
	{MarkFluxExtra, []byte("fluxcd.controlplane.io")},
	{MarkFluxExtra, []byte("source.extensions.fluxcd.io")},
	{MarkConfig, []byte("ConfigMap")},
	{MarkConfig, []byte("Secret")},
}

// MarksOf returns the marks data holds.
func MarksOf(data []byte) Marks {
	var m Marks
	for _, k := range markers {
		if m&k.mark == 0 && bytes.Contains(data, k.text) {
			m |= k.mark
		}
	}
	return m
}

// scanMarks reads each file once for its marks (stdin and files that
// cannot be read have none); files without any are left out.
func scanMarks(files []string) map[string]Marks {
	out := map[string]Marks{}
	for _, f := range files {
		if f == manifest.Stdin {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if m := MarksOf(data); m != 0 {
			out[f] = m
		}
	}
	return out
}
