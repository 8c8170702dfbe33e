package discover

import (
	"path/filepath"
	"slices"

	"github.com/kilnhq/kiln/discover/charts"
	"github.com/kilnhq/kiln/internal/pathkey"
	"github.com/kilnhq/kiln/manifest"
	"sigs.k8s.io/kustomize/api/resource"
)

// A Controller renders what a GitOps controller deploys from the input
// (discover/flux: Flux Kustomizations). Discover calls it once the
// kustomizations of the input are built, with what it found; the files
// the controller's builds read are then linted through its units only.
// Render runs while discovery collects what kustomize prints on stderr
// (captureOutput): it must not collect it itself.
type Controller interface {
	Render(in *ControllerInput) *ControllerOutput
}

// ControllerInput is what discovery found, for a Controller.
type ControllerInput struct {
	// Roots are the directories named as inputs, as named.
	Roots []string
	// Files are the plain manifest files found (those no kustomization
	// build read, not excluded, not patches), in input order; the objects
	// of the others are in Units.
	Files []string
	// Marks are what one read of each of Files found in its bytes
	// (scanMarks): a controller parses only the files marked for it.
	Marks map[string]Marks
	// Units are the kustomizations built (the topmost ones) and the
	// units of the controllers called before this one.
	Units []*Unit
	// Charts are the input's charts rendered as discovery renders them
	// (their own values, .kiln.yaml's helm settings): what a chart of
	// Applications (an app of apps) outputs.
	Charts []*Unit
	// Build builds a directory with kustomize, as discovery builds
	// kustomizations (offline, no plugins, positions in the source files).
	Build func(BuildRequest) *Built
	// RenderChart renders a chart of the input or of the chart cache
	// with discovery's Helm engine and values of the controller's own.
	RenderChart func(ChartRequest) *ChartRendered
}

// BuildRequest is one kustomize build a Controller asks for.
type BuildRequest struct {
	// Dir is the directory built.
	Dir string
	// Kustomization, when set, is the kustomization file Dir is built
	// with, read at KustomizationFile (in Dir) whether or not a file is
	// there: a controller's generated or amended one.
	Kustomization     []byte
	KustomizationFile string
	// ReportAt is the file objects without a traceable source and the
	// build's errors point at ("": KustomizationFile).
	ReportAt string
	// LoadAnywhere lets the build read files outside Dir (kustomize's
	// LoadRestrictionsNone, as kustomize-controller builds).
	LoadAnywhere bool
	// Transform is applied to each object kustomize outputs, before its
	// positions are set; an error drops the object and is reported.
	Transform func(*resource.Resource) error
	// TransformKey is what Transform depends on, for the render cache: a
	// request with a Transform but no TransformKey is built every run.
	TransformKey string
	// Remember, when set, says once the build is done whether all
	// Transform did is in the objects (nothing noted on the side, which a
	// build restored from the render cache would not note), so that the
	// build may be remembered.
	Remember func() bool
	// Unit names the unit the objects belong to (manifest.Object.Unit;
	// "": Dir).
	Unit string
}

// Built is the result of a BuildRequest.
type Built struct {
	// Source holds the objects and the problems building found (a failed
	// build: one error).
	Source *manifest.Source
	// Read are the absolute paths of every file the build read.
	Read map[string]bool
	// Remote names a remote base the build needs (kiln never fetches
	// it) with where it is written; Plugin a plugin or KRM function it
	// needs (kiln never runs one). Either way nothing was built.
	Remote    string
	RemotePos manifest.Position
	Plugin    string
}

// ControllerOutput is what a Controller rendered.
type ControllerOutput struct {
	Units []*Unit
	// Consumed are the files (absolute paths) the units' builds read,
	// linted through them: as plain files and kustomizations they are
	// not linted again.
	Consumed map[string]bool
	// Charts are the chart cache's charts the units need (what `kiln
	// fetch` downloads), MissingCharts those it lacks.
	Charts, MissingCharts []charts.Source
	Skipped               []manifest.Skipped
	Warnings              []error
	Errs                  []error
	// GitSource, when set, is the controller's one rule for the folder a
	// Git source stands for (this repository, or one mapped in
	// .kiln.yaml), which HelmRelease rendering follows too.
	GitSource func(namespace, name, file string) (dir string, ok bool)
}

// build runs a Controller's BuildRequest with the shared sources of one
// discovery.
func (s *buildShared) build(r BuildRequest) *Built {
	file := r.KustomizationFile
	if file == "" {
		file = kustomizationFile(r.Dir)
	}
	b := &kustBuild{dir: r.Dir, file: file, read: map[string]bool{}, req: &r}
	if r.ReportAt != "" {
		b.file = r.ReportAt
	}
	runBuild(b, s)
	out := &Built{Source: b.source, Read: b.read, Remote: b.remote, RemotePos: b.remotePos, Plugin: b.plugin}
	if r.Kustomization != nil {
		delete(out.Read, pathkey.Real(r.KustomizationFile)) // not a file of the input when generated
	}
	return out
}

// runControllers renders the controllers' units, takes the kustomization
// units they consumed out of kusts (one whose kustomization file a
// controller's build read is linted through that build) and the chart
// units out of charts likewise (Chart.yaml), and returns the files they
// consumed (absolute paths), which are not linted as plain files.
func runControllers(opts Options, roots, files []string, marks map[string]Marks, kusts *kustOutcome, charts *[]renderedChart, shared *buildShared, res *Result) map[string]bool {
	consumed := map[string]bool{}
	if len(opts.Controllers) == 0 {
		return consumed
	}
	notes := captureOutput()
	var rendered []*Unit // the controllers' units so far: a later controller renders what they output too
	for _, c := range opts.Controllers {
		var chartUnits []*Unit
		for _, ch := range *charts {
			chartUnits = append(chartUnits, ch.unit)
		}
		in := &ControllerInput{Roots: roots, Files: files, Marks: marks, Units: append(slices.Clip(kusts.units), rendered...), Charts: chartUnits, Build: shared.build,
			RenderChart: func(r ChartRequest) *ChartRendered { return renderRequest(r, opts) }}
		out := c.Render(in)
		if out == nil {
			continue
		}
		if out.GitSource != nil && res.gitSource == nil {
			res.gitSource = out.GitSource
		}
		rendered = append(rendered, out.Units...)
		res.Skipped = append(res.Skipped, out.Skipped...)
		res.Warnings = append(res.Warnings, out.Warnings...)
		res.Errs = append(res.Errs, out.Errs...)
		res.Charts = append(res.Charts, out.Charts...)
		res.MissingCharts = append(res.MissingCharts, out.MissingCharts...)
		for f := range out.Consumed {
			consumed[f] = true
		}
		var kept []*Unit
		for _, u := range kusts.units {
			if !out.Consumed[pathkey.Real(kustomizationFile(u.Dir))] {
				kept = append(kept, u)
			}
		}
		kusts.units = kept
		var keptCharts []renderedChart
		for _, ch := range *charts {
			if !out.Consumed[pathkey.Real(filepath.Join(ch.unit.Dir, "Chart.yaml"))] {
				keptCharts = append(keptCharts, ch)
			}
		}
		*charts = keptCharts
	}
	printed := kustomizeNotes(notes())
	shared.store.Commit(len(printed) == 0) // a build restored would not print it again
	res.Warnings = append(res.Warnings, printed...)
	res.Units = append(res.Units, rendered...)
	return consumed
}
