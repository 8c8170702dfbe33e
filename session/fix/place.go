package fix

import (
	"os"
	"sort"

	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules"
)

// placed is where the repairs of a judgement are made: the files to edit,
// the findings as those files' objects carry them, and the repairs kiln
// fix cannot make in a file, each with what to change instead.
type placed struct {
	files    []*File
	findings []rules.Finding
	// origin is, for each finding, the object it was judged on (a
	// rendered one for a finding moved to its source document).
	origin []objectKey
	notes  []string
}

// objectKey is an object by its file and reference, as findings name it.
type objectKey struct {
	file string
	ref  manifest.Ref
}

// place places the repairs the findings of j carry: a finding on a plain
// file's object stays on it; one on an object kustomize rendered moves to
// the resource document it was rendered from (OnSource), read from edited
// when it has its new content; one on an object a chart rendered becomes
// advice on its template or values (TemplateAdvice), and its repair is
// dropped from the Result (the report says kiln fix does not make it).
func place(j *Judged, edited map[string][]byte) *placed {
	p := &placed{files: append([]*File(nil), j.Plain...)}
	plain := map[objectKey]bool{}
	for _, f := range j.Plain {
		if fi, err := os.Stat(f.Path); err == nil && f.Mode == 0 {
			f.Mode = fi.Mode().Perm() // written back with its permissions
		}
		for _, o := range f.Objects {
			plain[objectKey{o.File, o.Ref()}] = true
		}
	}
	rendered := map[objectKey][]*manifest.Object{}
	chart := map[string]bool{} // unit directories that are charts
	for _, u := range j.Units {
		for _, o := range u.Source.Objects {
			k := objectKey{o.File, o.Ref()}
			rendered[k] = append(rendered[k], o)
		}
		chart[u.Dir] = u.Kind == "chart" || u.Kind == "helmrelease" // a HelmRelease's objects are a chart's
	}
	sources := map[string]*File{}
	notes := map[string]bool{}
	res := j.Result
	for i, f := range res.Findings {
		k := objectKey{f.Pos.File, f.Object}
		if f.Fix == nil || f.Suppressed != nil || plain[k] || len(rendered[k]) == 0 {
			p.findings = append(p.findings, f) // on a plain file's object (or nothing to place)
			p.origin = append(p.origin, k)
			continue
		}
		if ro := rendered[k]; chart[ro[0].Unit] {
			if data, err := os.ReadFile(f.Pos.File); err == nil {
				notes[TemplateAdvice(f, data)] = true
			}
			res.Findings[i].Fix = nil // not kiln fix's to repair: the report says so
			continue
		}
		src := sources[f.Pos.File]
		if src == nil {
			src = readEdited(f.Pos.File, edited)
			sources[f.Pos.File] = src
			p.files = append(p.files, src)
		}
		on, reason, ok := OnSource(f, rendered[k], src)
		if !ok {
			notes[f.Pos.String()+": "+f.Rule+": "+f.Object.String()+": kiln fix cannot repair it: "+reason] = true
			res.Findings[i].Fix = nil
			continue
		}
		p.findings = append(p.findings, on)
		p.origin = append(p.origin, k)
	}
	for n := range notes {
		p.notes = append(p.notes, n)
	}
	sort.Strings(p.notes)
	return p
}

// readEdited reads a file to fix, from edited when it has its new content.
func readEdited(path string, edited map[string][]byte) *File {
	data, ok := edited[path]
	if !ok {
		return ReadFile(path)
	}
	objs, errs := manifest.Parse(path, data)
	return &File{Path: path, Src: data, Objects: objs, Errs: errs}
}
