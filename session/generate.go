package session

import (
	"bytes"
	"io"

	"github.com/kilnhq/kiln/discover/argocd"
	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules"
)

// Generated is what an Argo CD generate made.
type Generated struct {
	// Findings are the lint's findings on what was generated.
	Findings *rules.Result
	// Stream is the YAML stream to apply; empty when Findings fail the run.
	Stream []byte
	// refused is set when Findings fail the run.
	refused bool
}

// Deliver writes the stream to w, or, when the findings fail the run,
// nothing: a Refused error.
func (g *Generated) Deliver(w io.Writer) error {
	if g.refused {
		return &Refused{Msg: "lint findings at the fail-on level; nothing generated"}
	}
	_, err := w.Write(g.Stream)
	return err
}

// Generate is kiln argocd generate for the Application p (from Argo CD's
// CMP environment, argocd.PluginFromEnv): dir rendered by the same code
// as lint renders a source of kiln's plugin (argocd.RenderPlugin: the App
// specs compiled, the plain manifests passed through, hidden files and
// kustomization files not read, the objects without a namespace given
// the Application's, else the run's Settings.Namespace), then judged.
// With syncWaves the compiled objects carry Argo CD sync waves.
func (s *Session) Generate(dir string, p *argocd.Plugin, syncWaves bool) (*Generated, error) {
	out := argocd.RenderPlugin(argocd.PluginRequest{Dir: dir, Plugin: p, Namespace: s.Settings.Namespace,
		SyncWaves: syncWaves, Excluded: s.Settings.Excluded, Stdin: s.Stdin})
	errs := out.Source.Errs
	if len(out.Files) == 0 && len(errs) == 0 {
		errs = append(errs, &manifest.Error{Pos: manifest.Position{File: dir}, Msg: "no manifests or App specs to generate from"})
	}
	if err := inputErrors(errs); err != nil {
		return nil, err
	}
	listed := make([]rules.FileObjects, 0, len(out.Files))
	for _, src := range out.Files {
		fo := rules.FileObjects{File: src.Path}
		for _, o := range src.Objects {
			fo.Objects = append(fo.Objects, o.Ref())
		}
		listed = append(listed, fo)
	}
	res, err := s.Judge(out.Source.Objects, listed)
	if err != nil {
		return nil, err
	}
	g := &Generated{Findings: res, refused: s.Fails(res)}
	if g.refused {
		return g, nil
	}
	var buf bytes.Buffer
	if err := manifest.Write(&buf, out.Source.Objects); err != nil {
		return nil, err
	}
	g.Stream = buf.Bytes()
	return g, nil
}
