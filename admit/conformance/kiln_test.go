package conformance

import (
	"encoding/json"
	"fmt"
	"github.com/kilnhq/kiln/admit"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/kilnhq/kiln/discover"
	"github.com/kilnhq/kiln/lint"
	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules"
	"github.com/kilnhq/kiln/rules/checkers"
	"github.com/kilnhq/kiln/session/settings"
)

// linted is one `kiln lint PATHS` run: the objects it judged, in input
// order, with the manifest each was as read (rendered, before admission),
// and its findings.
type linted struct {
	objects  []*judged
	findings []rules.Finding
	opts     *rules.Options
	// inputErrs are the run's input problems (a chart that cannot render
	// without values, invalid YAML); notRendered the charts and
	// kustomizations that rendered nothing because of one.
	inputErrs   []error
	notRendered []string
}

// judged is one object kiln judged and what kubectl would send for it.
type judged struct {
	obj *manifest.Object
	// raw is the object as read or rendered, before admission changed it;
	// body is raw as JSON, what kubectl sends. Both nil when the object
	// cannot be decoded (an input error kiln reports).
	raw  map[string]any
	body []byte
	// pods are the Pods a controller would make from its pod templates.
	pods [][]byte
}

// lintCorpus runs kiln over paths as `kiln lint PATHS` does
// (cmd/kiln/lint.go: settings from the nearest .kiln.yaml, discover.Discover
// renders the charts and kustomizations, lint.Run admits and judges in two
// passes with every registered checker), keeping each object as it was
// read, before admission replaces it (lint.Input.Raw), so that the server
// is sent exactly the objects kiln judged.
func lintCorpus(t *testing.T, paths []string) *linted {
	t.Helper()
	s, err := settings.New().Load(paths)
	if err != nil {
		t.Fatalf("settings: %v", err)
	}
	cfg, opts := s.RuleConfig(), s.Options()
	found := discover.Discover(paths, discover.Options{KubeVersion: opts.KubeVersion, Excluded: s.Excluded, Chart: s.Chart})
	rec := &recorder{seen: map[*manifest.Object]*judged{}}
	eng := &rules.Engine{Checkers: checkers.All(), Options: opts, Config: cfg}
	out, err := lint.Run(eng, lint.Input{Files: found.Files, Units: found.Units, Raw: rec.raw}, false)
	if err != nil {
		t.Fatalf("kiln lint %s: %v", strings.Join(paths, " "), err)
	}
	defer out.Result.Close()
	l := &linted{opts: opts, inputErrs: append(append([]error(nil), found.Errs...), out.Errs...)}
	if err := out.Result.Each(func(f rules.Finding) error {
		l.findings = append(l.findings, f)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for _, u := range found.Units {
		if len(u.Source.Errs) > 0 && len(u.Source.Objects) == 0 {
			l.notRendered = append(l.notRendered, u.Kind+" "+u.Dir)
		}
	}
	for _, j := range rec.seen {
		l.objects = append(l.objects, j)
	}
	sort.Slice(l.objects, func(a, b int) bool { return l.objects[a].obj.Order < l.objects[b].obj.Order })
	return l
}

// recorder keeps every object the engine judges, as it was before
// admission.
type recorder struct {
	mu   sync.Mutex
	seen map[*manifest.Object]*judged
}

// raw sees every object before admission: the context objects first (the
// rendered ones are judged as themselves, already admitted), then every
// object judged.
func (r *recorder) raw(o *manifest.Object) {
	if !o.ReadAhead { // a first-pass copy: the document is read again and judged
		r.keep(o)
	}
}

// keep records o as it is now, once.
func (r *recorder) keep(o *manifest.Object) {
	r.mu.Lock()
	_, done := r.seen[o]
	r.mu.Unlock()
	if done {
		return
	}
	j := &judged{obj: o}
	if content, err := o.Content(); err == nil {
		if body, err := json.Marshal(content); err == nil {
			j.body = body
			_ = json.Unmarshal(body, &j.raw) // a copy: admission changes the content
			j.pods = podsFrom(o, j.raw)
		}
	}
	r.mu.Lock()
	r.seen[o] = j
	r.mu.Unlock()
}

// kilnVerdict is kiln's answer for one object and for the Pods made from
// its templates.
type kilnVerdict struct {
	verdict
	psaDenied bool // an enforce failure on a workload's templates
	psaDetail string
	// own are the errors of kiln's own rules (jobset/…, storage/…,
	// sidecar/…, object/…), which no server gives.
	own []rules.Finding
	// admissionUnmarked are Pod Security's findings not marked as found
	// after the first error on an object kiln refuses: on an object the
	// server refuses before admission there must be none (issue 47,
	// item 4).
	admissionUnmarked []string
}

// findingsByObject groups the unsuppressed findings by the object and file
// they point at: a finding names its object by reference, and points into
// the file the object was read or rendered from.
type objectFile struct {
	ref  manifest.Ref
	file string
}

func findingsByObject(fs []rules.Finding) map[objectFile][]rules.Finding {
	out := map[objectFile][]rules.Finding{}
	for _, f := range fs {
		if f.Suppressed == nil {
			k := objectFile{f.Object, f.Pos.File}
			out[k] = append(out[k], f)
		}
	}
	return out
}

// rejection reports the findings of the server's object checks: what the
// server refuses before admission (decoding, validation, a version or kind
// it does not serve).
func rejection(f rules.Finding) bool {
	return f.Severity == rules.Error && (strings.HasPrefix(f.Rule, "schema/") || strings.HasPrefix(f.Rule, "api/") || f.Rule == "psa/decode" || f.Rule == "psa/invalid-label")
}

// kilnVerdictOf classifies kiln's findings on one object the way the server
// answers: refused before admission (rejection), denied by admission (a
// Pod's psa/… error or a user policy's Deny), warned (psa/… warnings for a
// Pod; any psa/… finding of a workload, which the server gives as warnings
// on the workload), and the Pods of a workload denied (its psa/… errors).
func kilnVerdictOf(o *manifest.Object, fs []rules.Finding) kilnVerdict {
	var v kilnVerdict
	isPod := o.Kind == "Pod" && o.Group() == ""
	var details []string
	for _, f := range fs {
		psa := strings.HasPrefix(f.Rule, "psa/") && f.Rule != "psa/invalid-label" && f.Rule != "psa/decode"
		if psa && f.Severity > rules.Info && !strings.Contains(f.Message, admit.NextSuffix) {
			v.admissionUnmarked = append(v.admissionUnmarked, f.Rule)
		}
		// A policy's verdict on the object, not kiln's report on a policy or
		// binding itself (one that never takes effect).
		userPolicy := strings.HasPrefix(f.Rule, "policy/") && f.Rule != "policy/unknown-kind" && o.Group() != "admissionregistration.k8s.io"
		switch {
		case rejection(f):
			v.rejected = true
		case psa && f.Severity == rules.Error:
			if isPod {
				v.denied = true
			} else {
				v.psaDenied = true
				v.psaWarn = true
				v.psaDetail += f.Rule + " "
			}
		case psa:
			v.psaWarn = true
		case userPolicy && f.Severity == rules.Error:
			v.denied = true
		case userPolicy && f.Severity == rules.Warning:
			v.polWarn = true
		case f.Severity == rules.Warning && (f.Rule == "schema/server-warning" || f.Rule == "api/deprecated"):
			v.warn = true
		case f.Severity == rules.Error && !strings.HasPrefix(f.Rule, "policy/") && f.Rule != "psa/invalid-label":
			v.own = append(v.own, f)
		}
		if f.Severity > rules.Info {
			details = append(details, fmt.Sprintf("%s %s: %s", f.Severity, f.Rule, f.Message))
		}
	}
	if isPod && v.denied {
		v.psaWarn = false // a Pod denied by enforce carries no warnings
	}
	if !v.rejected {
		v.admissionUnmarked = nil // only an object refused before admission must mark them
	}
	v.detail = strings.Join(details, " | ")
	if v.detail == "" {
		v.detail = "(no finding)"
	}
	return v
}
