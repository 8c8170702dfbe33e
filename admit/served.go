package admit

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kubernetes/pkg/api/legacyscheme"

	"github.com/kilnhq/kiln/admit/servedversions"
	"github.com/kilnhq/kiln/manifest"
)

// RuleUncheckedVersion notes an object whose version the target Kubernetes
// serves but kiln's API server code (the newest release) no longer has, so
// that its fields are not checked.
const RuleUncheckedVersion = "schema/unchecked-version"

// served says whether a kube-apiserver at the target version serves a
// built-in kind at its version by default, from the table generated from
// each release's sources (admit/servedversions). done is true when
// Admit has nothing more to do: the version is not served (an error that
// says why and what to use), or it is served but kiln's API server code no
// longer has it (a note that its fields are not checked). Kinds of other
// groups (custom resources) are left to the CRDs.
func (a *Admitter) served(o *manifest.Object, gvk schema.GroupVersionKind) (res Result, done bool) {
	if !builtinGroup(gvk.Group) {
		return Result{}, false
	}
	kube := a.opts.KubeVersion
	e, listed := servedversions.Lookup(gvk.Group, gvk.Version, gvk.Kind)
	known := legacyscheme.Scheme.Recognizes(gvk)
	switch {
	case listed && e.Served.Has(kube) && known:
		return Result{}, false
	case listed && e.Served.Has(kube):
		msg := fmt.Sprintf("%s %s is served by Kubernetes %s, but kiln checks objects with the API server code of Kubernetes %s, which no longer has this version: its fields are not checked", o.APIVersion, o.Kind, kube, manifest.LatestKube)
		if use := checkedVersion(gvk.GroupKind(), kube); use != "" {
			msg += fmt.Sprintf(" (%s, also served by %s, would be)", use, kube)
		}
		return Result{Judged: true, Problems: []Problem{{Rule: RuleUncheckedVersion, Field: "apiVersion", Message: msg}}}, true
	case !listed && known:
		// A kind the server has but serves under no resource of its own
		// (Eviction, Scale): the rest of the create path judges it.
		return Result{}, false
	}
	why, rule := unserved(gvk, e, listed, kube)
	msg := fmt.Sprintf("%s %s %s", o.APIVersion, o.Kind, why)
	if use := servedVersion(gvk.GroupKind(), kube); use != "" {
		msg += fmt.Sprintf("; use apiVersion: %s", use)
	} else {
		msg += fmt.Sprintf("; no version of %s is served at Kubernetes %s", o.Kind, kube)
		if other := existingVersions(gvk.GroupKind(), kube, o.APIVersion); len(other) > 0 {
			msg += fmt.Sprintf(" by default: it has %s as %s, served where the cluster enables it (--runtime-config=%s=true)", o.Kind, strings.Join(other, " and "), other[0])
		}
	}
	return Result{Problems: []Problem{{Rule: rule, Field: "apiVersion", Message: msg}}, Rejected: true, Judged: true}, true
}

// unserved says why gvk, which e describes when listed, is not served by
// default at kube, and the rule that reports it: schema/unknown-kind when
// the group has no version of the kind at kube, else
// schema/unserved-version.
func unserved(gvk schema.GroupVersionKind, e servedversions.Entry, listed bool, kube manifest.KubeVersion) (string, string) {
	versions := servedversions.Versions(gvk.Group, gvk.Kind)
	if !kindExists(gvk.GroupKind(), versions, kube) {
		if len(versions) == 0 {
			return fmt.Sprintf("is not a kind the API server knows (group %q has no kind %s)", gvk.Group, gvk.Kind), RuleUnknownKind
		}
		return fmt.Sprintf("is not a kind the API server knows at Kubernetes %s (group %q %s)", kube, gvk.Group, history(gvk.Kind, versions, kube)), RuleUnknownKind
	}
	if !listed {
		return fmt.Sprintf("is not served by Kubernetes %s (no release from %s to %s has this version)", kube, manifest.OldestKube, manifest.LatestKube), RuleUnservedKind
	}
	exists := e.Exists.Has(kube)
	switch {
	case !e.Served.Empty() && kube.Minor < e.Served.From && exists:
		return fmt.Sprintf("is not served by default before Kubernetes 1.%d (Kubernetes %s serves it only where the cluster enables it with --runtime-config)", e.Served.From, kube), RuleUnservedKind
	case !e.Served.Empty() && kube.Minor < e.Served.From:
		return fmt.Sprintf("is not served before Kubernetes 1.%d", e.Served.From), RuleUnservedKind
	case !e.Served.Empty() || kube.Minor > e.Exists.To:
		end := e.Exists.To
		if !e.Served.Empty() {
			end = e.Served.To
		}
		return fmt.Sprintf("is no longer served since Kubernetes 1.%d", end+1), RuleUnservedKind
	case exists:
		return fmt.Sprintf("is %s that Kubernetes %s serves only where the cluster enables it (--runtime-config)", stage(gvk.Version), kube), RuleUnservedKind
	default:
		return fmt.Sprintf("is not served before Kubernetes 1.%d, and then only where the cluster enables it (--runtime-config)", e.Exists.From), RuleUnservedKind
	}
}

// kindExists reports whether the group has the kind at kube, at some
// version. A kind the table does not list (it has no resource of its own)
// exists when kiln's scheme knows it.
func kindExists(gk schema.GroupKind, versions []servedversions.Entry, kube manifest.KubeVersion) bool {
	if len(versions) == 0 {
		return len(legacyscheme.Scheme.VersionsForGroupKind(gk)) > 0
	}
	for _, e := range versions {
		if e.Exists.Has(kube) {
			return true
		}
	}
	return false
}

// history says when the group had the kind, which it has not at kube.
func history(kind string, versions []servedversions.Entry, kube manifest.KubeVersion) string {
	var last, next *servedversions.Entry
	for i, e := range versions {
		if e.Exists.To < kube.Minor && (last == nil || e.Exists.To > last.Exists.To) {
			last = &versions[i]
		}
		if e.Exists.From > kube.Minor && (next == nil || e.Exists.From < next.Exists.From) {
			next = &versions[i]
		}
	}
	switch {
	case next != nil:
		return fmt.Sprintf("has %s from 1.%d, first as %s", kind, next.Exists.From, next.APIVersion())
	case last != nil:
		return fmt.Sprintf("had %s up to 1.%d, last as %s", kind, last.Exists.To, last.APIVersion())
	}
	return fmt.Sprintf("has no kind %s at %s", kind, kube)
}

// stage names an API version's stability for messages.
func stage(version string) string {
	switch {
	case strings.Contains(version, "alpha"):
		return "an alpha API"
	case strings.Contains(version, "beta"):
		return "a beta API"
	}
	return "a version"
}

// servedVersion returns the apiVersion that serves a kind at kube by
// default, the version the API server prefers first.
func servedVersion(gk schema.GroupKind, kube manifest.KubeVersion) string {
	for _, e := range servedversions.Versions(gk.Group, gk.Kind) {
		if e.Served.Has(kube) {
			return e.APIVersion()
		}
	}
	return ""
}

// existingVersions returns the apiVersions other than but that a kind has at kube,
// served by default or not, in the API server's order of preference.
func existingVersions(gk schema.GroupKind, kube manifest.KubeVersion, but string) []string {
	var out []string
	for _, e := range servedversions.Versions(gk.Group, gk.Kind) {
		if e.Exists.Has(kube) && e.APIVersion() != but {
			out = append(out, e.APIVersion())
		}
	}
	return out
}

// checkedVersion is servedVersion among the versions kiln's scheme has.
func checkedVersion(gk schema.GroupKind, kube manifest.KubeVersion) string {
	for _, e := range servedversions.Versions(gk.Group, gk.Kind) {
		if e.Served.Has(kube) && legacyscheme.Scheme.Recognizes(gk.WithVersion(e.Version)) {
			return e.APIVersion()
		}
	}
	return ""
}

// builtinGroup reports whether the API server itself serves the group at
// some release (so that a kind it lacks is an error, not a custom resource
// without its CRD).
func builtinGroup(group string) bool {
	return servedversions.HasGroup(group) || legacyscheme.Scheme.IsGroupRegistered(group)
}
