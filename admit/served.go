package admit

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kubernetes/pkg/api/legacyscheme"

	"github.com/kilnhq/kiln/manifest"
)

// gaSince is the release whose API server first served a GA version of a
// kind, for the kinds that became GA after kiln's oldest target (1.16).
// Source: the Kubernetes release notes and API reference of each release
// (the "GA" / "graduated to stable" entries). Beta versions need no table:
// k8s.io/api carries their lifecycle (APILifecycleIntroduced, …Removed).
var gaSince = map[schema.GroupVersionKind]manifest.KubeVersion{
	{Group: "autoscaling", Version: "v2", Kind: "HorizontalPodAutoscaler"}:                           v(23),
	{Group: "policy", Version: "v1", Kind: "PodDisruptionBudget"}:                                    v(21),
	{Group: "policy", Version: "v1", Kind: "Eviction"}:                                               v(22),
	{Group: "batch", Version: "v1", Kind: "CronJob"}:                                                 v(21),
	{Group: "discovery.k8s.io", Version: "v1", Kind: "EndpointSlice"}:                                v(21),
	{Group: "networking.k8s.io", Version: "v1", Kind: "Ingress"}:                                     v(19),
	{Group: "networking.k8s.io", Version: "v1", Kind: "IngressClass"}:                                v(19),
	{Group: "networking.k8s.io", Version: "v1", Kind: "IPAddress"}:                                   v(33),
	{Group: "networking.k8s.io", Version: "v1", Kind: "ServiceCIDR"}:                                 v(33),
	{Group: "node.k8s.io", Version: "v1", Kind: "RuntimeClass"}:                                      v(20),
	{Group: "certificates.k8s.io", Version: "v1", Kind: "CertificateSigningRequest"}:                 v(19),
	{Group: "events.k8s.io", Version: "v1", Kind: "Event"}:                                           v(19),
	{Group: "storage.k8s.io", Version: "v1", Kind: "CSIDriver"}:                                      v(18),
	{Group: "storage.k8s.io", Version: "v1", Kind: "CSINode"}:                                        v(17),
	{Group: "storage.k8s.io", Version: "v1", Kind: "CSIStorageCapacity"}:                             v(24),
	{Group: "storage.k8s.io", Version: "v1", Kind: "VolumeAttributesClass"}:                          v(34),
	{Group: "flowcontrol.apiserver.k8s.io", Version: "v1", Kind: "FlowSchema"}:                       v(29),
	{Group: "flowcontrol.apiserver.k8s.io", Version: "v1", Kind: "PriorityLevelConfiguration"}:       v(29),
	{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "ValidatingAdmissionPolicy"}:        v(30),
	{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "ValidatingAdmissionPolicyBinding"}: v(30),
	{Group: "authentication.k8s.io", Version: "v1", Kind: "SelfSubjectReview"}:                       v(28),
	{Group: "resource.k8s.io", Version: "v1", Kind: "ResourceClaim"}:                                 v(34),
	{Group: "resource.k8s.io", Version: "v1", Kind: "ResourceClaimTemplate"}:                         v(34),
	{Group: "resource.k8s.io", Version: "v1", Kind: "ResourceSlice"}:                                 v(34),
	{Group: "resource.k8s.io", Version: "v1", Kind: "DeviceClass"}:                                   v(34),
}

func v(minor int) manifest.KubeVersion { return manifest.KubeVersion{Major: 1, Minor: minor} }

// betaByDefault is the last release whose new beta APIs were served by
// default: from 1.24 on, a new beta API is off unless the cluster enables
// it (KEP-3136).
var betaByDefault = manifest.KubeVersion{Major: 1, Minor: 23}

type lifecycle interface {
	APILifecycleIntroduced() (major, minor int)
}

type removal interface {
	APILifecycleRemoved() (major, minor int)
}

// Served says whether a kube-apiserver at the target version serves a
// built-in kind at a version by default, and if not, why and what to use.
// ok is true for kinds it knows nothing about (custom resources).
func (a *Admitter) served(o *manifest.Object, gvk schema.GroupVersionKind) ([]Problem, bool) {
	if !builtinGroup(gvk.Group) {
		return nil, true
	}
	kube := a.opts.KubeVersion
	why, ok := servedAt(gvk, kube)
	if ok {
		return nil, true
	}
	msg := fmt.Sprintf("%s %s %s", o.APIVersion, o.Kind, why)
	if use := servedVersion(gvk.GroupKind(), kube); use != "" {
		msg += fmt.Sprintf("; use apiVersion: %s", use)
	} else {
		msg += fmt.Sprintf("; no version of %s is served at Kubernetes %s", o.Kind, kube)
	}
	rule := RuleUnservedKind
	if len(legacyscheme.Scheme.VersionsForGroupKind(gvk.GroupKind())) == 0 {
		rule = RuleUnknownKind
	}
	return []Problem{{Rule: rule, Field: "apiVersion", Message: msg}}, false
}

// servedAt reports whether gvk is served by default at kube, else why not.
func servedAt(gvk schema.GroupVersionKind, kube manifest.KubeVersion) (string, bool) {
	if !legacyscheme.Scheme.Recognizes(gvk) {
		if len(legacyscheme.Scheme.VersionsForGroupKind(gvk.GroupKind())) == 0 {
			return fmt.Sprintf("is not a kind the API server knows (group %q has no kind %s)", gvk.Group, gvk.Kind), false
		}
		return fmt.Sprintf("is not served by Kubernetes %s", manifest.LatestKube), false
	}
	obj, err := legacyscheme.Scheme.New(gvk)
	if err != nil {
		return "", true
	}
	if r, ok := obj.(removal); ok {
		maj, min := r.APILifecycleRemoved()
		if maj > 0 && !kube.Less(manifest.KubeVersion{Major: maj, Minor: min}) {
			return fmt.Sprintf("is no longer served since Kubernetes %d.%d", maj, min), false
		}
	}
	switch {
	case strings.Contains(gvk.Version, "alpha"):
		return "is an alpha API, which no release serves unless the cluster enables it (--runtime-config)", false
	case strings.Contains(gvk.Version, "beta"):
		if l, ok := obj.(lifecycle); ok {
			maj, min := l.APILifecycleIntroduced()
			intro := manifest.KubeVersion{Major: maj, Minor: min}
			if kube.Less(intro) {
				return fmt.Sprintf("is not served before Kubernetes %s", intro), false
			}
			if betaByDefault.Less(intro) {
				return fmt.Sprintf("is a beta API added in %s; since 1.24 new beta APIs are off unless the cluster enables them (--runtime-config)", intro), false
			}
		}
	default:
		if since, ok := gaSince[gvk]; ok && kube.Less(since) {
			return fmt.Sprintf("is not served before Kubernetes %s", since), false
		}
	}
	return "", true
}

// servedVersion returns the apiVersion that serves a kind at kube, GA first.
func servedVersion(gk schema.GroupKind, kube manifest.KubeVersion) string {
	var beta string
	for _, gv := range legacyscheme.Scheme.PrioritizedVersionsForGroup(gk.Group) {
		gvk := gv.WithKind(gk.Kind)
		if !legacyscheme.Scheme.Recognizes(gvk) {
			continue
		}
		if _, ok := servedAt(gvk, kube); !ok {
			continue
		}
		if !strings.Contains(gv.Version, "beta") {
			return gv.String()
		}
		if beta == "" {
			beta = gv.String()
		}
	}
	return beta
}

// builtinGroup reports whether the API server itself serves the group (so
// that a kind it lacks is an error, not a custom resource without its CRD).
func builtinGroup(group string) bool {
	if group == "" || group == "extensions" {
		return true
	}
	return legacyscheme.Scheme.IsGroupRegistered(group)
}
