package rules

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/kilnhq/kiln/manifest"
)

// IgnoreAnnotation silences findings on one object:
// `kiln.dev/ignore: "psa/runAsNonRoot,sidecar/* # why"`. In a pod
// template's metadata (a Deployment's spec.template, a CronJob's
// jobTemplate, a JobSet's replicated jobs, … as manifest.PodTemplatesOf
// finds them) it silences the findings on that template: those whose field
// lies under the template's path. Charts often let users annotate only the
// pod template (podAnnotations).
const IgnoreAnnotation = "kiln.dev/ignore"

// ignoreField is the field path of the kiln.dev/ignore annotation in an
// object's metadata.
var ignoreField = "metadata.annotations[" + strconv.Quote(IgnoreAnnotation) + "]"

// ignoreKey identifies one kiln.dev/ignore annotation: an object's own
// (template "") or that of one of its pod templates (template is the
// template's path).
type ignoreKey struct {
	obj      manifest.Key
	template string
}

// field is the annotation's field path in its object.
func (k ignoreKey) field() string {
	if k.template == "" {
		return ignoreField
	}
	return k.template + "." + ignoreField
}

// ignoreRecord is one kiln.dev/ignore annotation: the entries that matched
// a diagnostic, and (once the object is judged) where it is.
type ignoreRecord struct {
	used   map[string]bool
	judged bool
	value  string
	ref    manifest.Ref
	pos    manifest.Position
}

// ignoreSite is a kiln.dev/ignore annotation that applies to a diagnostic.
type ignoreSite struct {
	key   ignoreKey
	value string
}

// viaKey is the key of the kiln.dev/ignore annotation of what rendered
// objects (manifest.Object.Via, "Kind namespace/name"), which applies to
// them: its entries count as used on the object it is written on.
func viaKey(via string) ignoreKey {
	return ignoreKey{template: "\x00via " + via}
}

// viaOf is the Via that names ref.
func viaOf(ref manifest.Ref) string {
	return ref.Kind + " " + ref.Namespace + "/" + ref.Name
}

// ignoresOf returns the kiln.dev/ignore annotations that apply to a
// diagnostic, the most specific first: its pod template's, then its
// object's, then that of what rendered it.
func ignoresOf(d Diagnostic) []ignoreSite {
	var out []ignoreSite
	switch {
	case d.At != nil:
		if d.At.tmplIgnored {
			out = append(out, ignoreSite{ignoreKey{d.At.key, d.At.tmpl}, d.At.tmplIgnore})
		}
		if d.At.ignored {
			out = append(out, ignoreSite{ignoreKey{obj: d.At.key}, d.At.ignore})
		}
		if d.At.viaIgnore != "" {
			out = append(out, ignoreSite{viaKey(d.At.Via), d.At.viaIgnore})
		}
	case d.Object != nil:
		if path, v, ok := templateIgnore(d.Object, d.Field); ok {
			out = append(out, ignoreSite{ignoreKey{d.Object.Key(), path}, v})
		}
		if v, ok := d.Object.Annotations[IgnoreAnnotation]; ok {
			out = append(out, ignoreSite{ignoreKey{obj: d.Object.Key()}, v})
		}
		if d.Object.ViaIgnore != "" {
			out = append(out, ignoreSite{viaKey(d.Object.Via), d.Object.ViaIgnore})
		}
	}
	return out
}

// templateIgnore returns the kiln.dev/ignore annotation of the pod template
// of o that holds field (not a Pod's own metadata: that is the object's):
// the template's path and the annotation's value.
func templateIgnore(o *manifest.Object, field string) (path, value string, ok bool) {
	if field == "" || !manifest.IsWorkload(o) {
		return "", "", false
	}
	for _, t := range manifest.PodTemplatesOf(o) {
		if t.Path != "" && (field == t.Path || strings.HasPrefix(field, t.Path+".")) {
			v, ok := templateAnnotation(o, t)
			return t.Path, v, ok
		}
	}
	return "", "", false
}

// templateAnnotations returns the kiln.dev/ignore annotations of o's pod
// templates, by template path.
func templateAnnotations(o *manifest.Object) map[string]string {
	if !manifest.IsWorkload(o) {
		return nil
	}
	var out map[string]string
	for _, t := range manifest.PodTemplatesOf(o) {
		if v, ok := templateAnnotation(o, t); ok && t.Path != "" {
			if out == nil {
				out = map[string]string{}
			}
			out[t.Path] = v
		}
	}
	return out
}

// templateAnnotation returns the kiln.dev/ignore annotation of a pod template.
func templateAnnotation(o *manifest.Object, t manifest.PodTemplate) (string, bool) {
	content, err := o.Content()
	if err != nil {
		return "", false
	}
	ann, _ := manifest.ValueAt(content, t.MetadataPath()+".annotations").(map[string]any)
	v, ok := ann[IgnoreAnnotation].(string)
	return v, ok
}

// judged counts a judged object and records where its kiln.dev/ignore
// annotations are (its own and its pod templates'), for kiln/unused-ignore.
func (r *run) judged(o *manifest.Object) {
	r.objects.Add(1)
	v, has := o.Annotations[IgnoreAnnotation]
	tmpls := templateAnnotations(o)
	if !has && len(tmpls) == 0 {
		return
	}
	key := o.Key()
	ref := o.Ref()
	at := map[ignoreKey]manifest.Position{}
	if has {
		at[ignoreKey{obj: key}] = o.Locate(ignoreField)
	}
	for path := range tmpls {
		k := ignoreKey{key, path}
		at[k] = o.Locate(k.field())
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for k, pos := range at {
		value := v
		if k.template != "" {
			value = tmpls[k.template]
		}
		rec := r.record(k)
		rec.judged, rec.value, rec.ref, rec.pos = true, value, ref, pos
	}
}

// record returns the ignore record of the key, made on first use; r.mu is held.
func (r *run) record(k ignoreKey) *ignoreRecord {
	rec := r.ignores[k]
	if rec == nil {
		rec = &ignoreRecord{used: map[string]bool{}}
		r.ignores[k] = rec
	}
	return rec
}

// use notes which entries of the annotations that apply to a diagnostic
// name its rule; r.mu is held.
func (r *run) use(rule string, sites []ignoreSite) {
	for _, s := range sites {
		ids, _, _ := strings.Cut(s.value, "#")
		for _, id := range strings.Split(ids, ",") {
			if id = strings.TrimSpace(id); MatchRule(id, rule) {
				r.record(s.key).used[id] = true
			}
		}
	}
}

// suppression returns the suppression of a finding of rule by the first
// annotation that names it, or nil.
func suppression(rule string, sites []ignoreSite) *Suppression {
	for _, s := range sites {
		if reason, ok := ignoredBy(s.value, rule); ok {
			return &Suppression{Kind: "annotation", Reason: reason}
		}
	}
	return nil
}

// ignoredBy reports whether a kiln.dev/ignore annotation value names the rule.
func ignoredBy(v, rule string) (reason string, ok bool) {
	ids, reason, _ := strings.Cut(v, "#")
	for _, id := range strings.Split(ids, ",") {
		if MatchRule(strings.TrimSpace(id), rule) {
			return strings.TrimSpace(reason), true
		}
	}
	return "", false
}

// UnusedIgnoreRule reports a kiln.dev/ignore entry that silenced nothing.
var UnusedIgnoreRule = &Rule{
	ID:       "kiln/unused-ignore",
	Severity: Warning,
	Summary:  "a kiln.dev/ignore annotation names a rule that reports nothing on its object",
	Doc: `An entry of a kiln.dev/ignore annotation that matched no finding on its
object (or, in a pod template's metadata, on that pod template): a typo in
the rule ID, a rule that no longer applies since the object was fixed, or a
rule that does not exist. Unused suppressions hide the next real finding of
that rule, so kiln reports them (as staticcheck reports unused ignore
directives), at the annotation. Entries naming rules that the configuration
turns off are not reported.

Fix: correct the rule ID, or remove the entry.`,
	Fail: `apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  annotations:
    kiln.dev/ignore: "psa/runAsNonroot # typo: no such rule"
data: {LOG_LEVEL: info}
`,
	Pass: `apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
data: {LOG_LEVEL: info}
`,
}

// unusedIgnores reports every kiln.dev/ignore entry of a judged object that
// matched none of the diagnostics it applies to, unless the config turns
// every rule it names off.
func (r *run) unusedIgnores(known []*Rule) []Finding {
	cfg := r.cfg
	if cfg.setting(UnusedIgnoreRule.ID).off {
		return nil
	}
	sev := UnusedIgnoreRule.Severity
	if s := cfg.setting(UnusedIgnoreRule.ID).severity; s != 0 {
		sev = s
	}
	var out []Finding
	for key, rec := range r.ignores {
		if !rec.judged {
			continue
		}
		where := "this object"
		if key.template != "" {
			where = "this pod template"
		}
		ids, _, _ := strings.Cut(rec.value, "#")
		var rendered *ignoreRecord // the same annotation as it applies to what the object renders
		if key.template == "" {
			rendered = r.ignores[viaKey(viaOf(rec.ref))]
		}
		for _, id := range strings.Split(ids, ",") {
			id = strings.TrimSpace(id)
			if id == "" || rec.used[id] || rendered != nil && rendered.used[id] || allOff(id, known, cfg) {
				continue
			}
			msg := fmt.Sprintf("%s entry %q suppresses nothing: no finding of that rule on %s; remove it (or fix the rule ID)", IgnoreAnnotation, id, where)
			if !matchesAny(id, known) {
				msg = fmt.Sprintf("%s entry %q names no rule kiln knows; `kiln rules` lists them", IgnoreAnnotation, id)
			}
			out = append(out, Finding{Rule: UnusedIgnoreRule.ID, Severity: sev, Message: msg, Pos: rec.pos, Object: rec.ref, Field: key.field()})
		}
	}
	return out
}

// matchesAny reports whether a pattern names at least one known rule.
func matchesAny(pattern string, known []*Rule) bool {
	for _, r := range known {
		if MatchRule(pattern, r.ID) {
			return true
		}
	}
	return false
}

// allOff reports whether the config turns off every known rule the pattern
// names (at least one): such an entry is waiting for the rule to come back.
func allOff(pattern string, known []*Rule, cfg *Config) bool {
	n := 0
	for _, r := range known {
		if MatchRule(pattern, r.ID) {
			if cfg.Enabled(r.ID) {
				return false
			}
			n++
		}
	}
	return n > 0
}
