package discover

import (
	"cmp"
	"fmt"
	"github.com/kilnhq/kiln/internal/pathkey"
	"maps"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/kilnhq/kiln/internal/plural"
	"github.com/kilnhq/kiln/manifest"
)

// Why files are not linted, one sentence per class (reports count files by
// it); Skipped.Detail says what put each file in its class.
const (
	// ReasonPatch: a kustomize patch nothing applies. kustomize merges a
	// patch into the objects it targets; on its own it is a partial
	// object that no one creates.
	ReasonPatch = "a kustomize patch that no build of the input applies"
	// ReasonRemoteInput, ReasonPluginInput, ReasonFailedInput: a file of a
	// kustomization kiln does not build.
	ReasonRemoteInput = "read by a kustomization with a remote base, which kiln never fetches"
	ReasonPluginInput = "read by a kustomization that needs a plugin or KRM function, which kiln never runs"
	ReasonFailedInput = "read by a kustomization that kustomize cannot build (its error is reported)"
	// ReasonComponentInput: a file of a Component that nothing includes.
	ReasonComponentInput = "read by a kustomize Component that no kustomization in the input includes"

	reasonRemoteKust    = "kustomization with a remote base, which kiln never fetches"
	reasonPluginKust    = "kustomization that needs a plugin or KRM function, which kiln never runs"
	reasonComponentKust = "kustomize Component that no kustomization in the input includes (components are built only where included)"
)

// kustOutcome is what the kustomization builds of one discovery decide.
type kustOutcome struct {
	units    []*Unit
	skipped  []manifest.Skipped
	warnings []error
	// consumed are the files a build read, linted through it (absolute
	// path → the kustomization's directory).
	consumed map[string]string
	// named are the files a kustomization names that no build read, and
	// why they are not linted on their own (absolute path → reason and
	// detail; Pos is set where the file is met).
	named map[string]manifest.Skipped
}

// settleKustomizations decides, from the builds of dirs, which are units
// (the topmost built ones), which are skipped and why, and which files the
// builds read or name. notes are what kustomize printed while building.
func settleKustomizations(builds []*kustBuild, notes []string) *kustOutcome {
	out := &kustOutcome{consumed: map[string]string{}, named: map[string]manifest.Skipped{}}
	readByOther := map[string]bool{} // kustomization files another build read
	kustFiles := map[string]string{} // every kustomization file built or read: absolute → as shown
	remotes := map[manifest.Position][]*kustBuild{}
	for _, b := range builds {
		kustFiles[pathkey.Real(b.file)] = b.file
		switch {
		case b.plugin != "":
			out.skipped = append(out.skipped, manifest.Skipped{Pos: manifest.Position{File: b.file}, Reason: reasonPluginKust})
			out.warnings = append(out.warnings, &manifest.Error{Pos: manifest.Position{File: b.file, Line: 1, Column: 1}, Msg: "warning: this kustomization needs a plugin or KRM function (" + b.plugin + "); kiln runs no code from the repository, so it is skipped: lint its output instead (kustomize build --enable-alpha-plugins DIR | kiln lint -)"})
		case b.remote != "":
			out.skipped = append(out.skipped, manifest.Skipped{Pos: manifest.Position{File: b.file}, Reason: reasonRemoteKust})
			remotes[b.remotePos] = append(remotes[b.remotePos], b)
		}
		own := pathkey.Real(b.file)
		// What a build whose output is linted read is linted through it
		// (a remote build read nothing; a Component's own build stands for
		// nothing: the builds that include it read its files again).
		linted := b.plugin == "" && !b.failed && !b.component
		for f := range b.read {
			if _, ok := out.consumed[f]; !ok && linted {
				out.consumed[f] = b.dir
			}
			if isKustomizationName(filepath.Base(f)) {
				if _, ok := kustFiles[f]; !ok {
					kustFiles[f] = relOr(f)
				}
				if f != own {
					readByOther[f] = true
				}
			}
		}
	}
	out.warnings = append(out.warnings, remoteWarnings(remotes)...)
	// Only topmost kustomizations are kept: one whose kustomization file
	// another build read is that build's base, component or overlay input.
	for _, b := range builds {
		if b.remote != "" || b.plugin != "" || readByOther[pathkey.Real(b.file)] {
			continue
		}
		if b.component {
			out.skipped = append(out.skipped, manifest.Skipped{Pos: manifest.Position{File: b.file}, Reason: reasonComponentKust})
			continue
		}
		out.units = append(out.units, &Unit{Kind: "kustomization", Dir: b.dir, Source: b.source})
	}
	for _, b := range builds {
		out.name(b)
	}
	out.warnings = append(out.warnings, deprecationWarnings(kustFiles)...)
	out.warnings = append(out.warnings, kustomizeNotes(notes)...)
	return out
}

// name records the files b names that no build read: its patches (whoever
// builds it, a patch no build applied is one nobody applies), and, when
// kiln does not build b, everything else it names or read before failing.
func (out *kustOutcome) name(b *kustBuild) {
	refs := readKustRefs(b.dir)
	why := ""
	switch {
	case b.remote != "":
		why = ReasonRemoteInput
	case b.plugin != "":
		why = ReasonPluginInput
	case b.component:
		why = ReasonComponentInput
	case b.failed:
		why = ReasonFailedInput
	}
	record := func(files []string, reason, detail string) {
		for _, f := range files {
			if _, read := out.consumed[f]; read {
				continue
			}
			if _, ok := out.named[f]; !ok {
				out.named[f] = manifest.Skipped{Reason: reason, Detail: detail}
			}
		}
	}
	patchDetail := "named as a patch in " + b.file
	if why != "" {
		patchDetail += ", which kiln does not build"
	}
	record(refs.patches, ReasonPatch, patchDetail)
	if why != "" {
		record(refs.resources, why, b.file)
		record(refs.inputs, why, b.file)
		record(slices.Sorted(maps.Keys(b.read)), why, b.file) // what a build that failed read before it did
	}
}

// remoteWarnings says once per remote base that it is not fetched, naming
// the kustomizations skipped over it (a base included by four overlays is
// one warning, not five).
func remoteWarnings(remotes map[manifest.Position][]*kustBuild) []error {
	positions := slices.SortedFunc(maps.Keys(remotes), func(a, b manifest.Position) int {
		return cmp.Or(cmp.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column))
	})
	var out []error
	for _, p := range positions {
		bs := remotes[p]
		what := "this kustomization is skipped: vendor the base or lint its rendered output"
		if len(bs) > 1 || pathkey.Real(bs[0].file) != pathkey.Real(p.File) {
			files := make([]string, len(bs))
			for i, b := range bs {
				files[i] = b.file
			}
			sort.Strings(files)
			what = "the " + plural.Count(len(bs), "kustomization") + " that include it are skipped (" + strings.Join(files, ", ") + "): vendor the base or lint their rendered output"
		}
		out = append(out, &manifest.Error{Pos: p, Msg: "warning: remote base " + bs[0].remote + " is not fetched (kiln works offline); " + what})
	}
	return out
}

// deprecationWarnings says once per kustomization file which of its fields
// kustomize deprecates (kustomize prints it once per build that reads the
// file, on stderr, naming no file).
func deprecationWarnings(kustFiles map[string]string) []error {
	shown := make([]string, 0, len(kustFiles))
	for _, f := range kustFiles {
		shown = append(shown, f)
	}
	sort.Strings(shown)
	var out []error
	for _, f := range shown {
		if fields := readKustRefs(filepath.Dir(f)).deprecated; len(fields) > 0 {
			out = append(out, deprecationWarning(fields))
		}
	}
	return out
}

// kustomizeNotes turns what kustomize printed while building into kiln
// warnings: its deprecation lines are said per file already
// (deprecationWarnings); any other line is kept, once, as kustomize's.
func kustomizeNotes(lines []string) []error {
	sort.Strings(lines) // builds run in parallel: their lines come in any order
	var out []error
	for _, l := range lines {
		if strings.HasPrefix(l, "Warning: '") && strings.Contains(l, "' is deprecated.") {
			continue
		}
		out = append(out, fmt.Errorf("warning: kustomize: %s", l))
	}
	return out
}

// relOr returns an absolute path relative to the working directory when it
// is below it, as users name paths.
func relOr(p string) string {
	if wd, err := filepath.Abs("."); err == nil {
		if rel, err := filepath.Rel(wd, p); err == nil && !strings.HasPrefix(rel, "..") {
			return rel
		}
	}
	return p
}
