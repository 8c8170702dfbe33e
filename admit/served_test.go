package admit

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kubernetes/pkg/api/legacyscheme"

	"github.com/kilnhq/kiln/admit/servedversions"
	"github.com/kilnhq/kiln/manifest"
)

// servedAt runs the served-version check alone on an object of
// apiVersion/kind at Kubernetes 1.minor.
func servedAt(t *testing.T, apiVersion, kind string, minor int) (Result, bool) {
	t.Helper()
	objs, errs := manifest.Parse("in.yaml", []byte(fmt.Sprintf("apiVersion: %s\nkind: %s\nmetadata: {name: x}\n", apiVersion, kind)))
	if len(errs) > 0 || len(objs) != 1 {
		t.Fatalf("parse: %v", errs)
	}
	a := &Admitter{opts: Options{KubeVersion: manifest.KubeVersion{Major: 1, Minor: minor}}}
	return a.served(objs[0], schema.FromAPIVersionAndKind(apiVersion, kind))
}

// refused reports whether the check refuses the object, with the problem.
func refused(r Result) (Problem, bool) {
	for _, p := range r.Problems {
		if p.Rule == RuleUnservedKind || p.Rule == RuleUnknownKind {
			return p, r.Rejected
		}
	}
	return Problem{}, false
}

// TestServedAtEdges: every kind of the generated served-versions table is
// served at the first and the last minor the table serves it, and refused
// one minor before and one after (within the minors kiln supports), with
// the version to use when one is served then. A version no release serves
// by default is refused where it exists. A served version kiln's scheme
// lacks is a note that its fields are not checked, never a refusal.
func TestServedAtEdges(t *testing.T) {
	type edge struct {
		minor  int
		served bool
	}
	checked := 0
	for _, e := range servedversions.Table() {
		var edges []edge
		if s := e.Served; !s.Empty() {
			edges = append(edges, edge{s.From, true}, edge{s.To, true})
			if s.From > servedversions.First {
				edges = append(edges, edge{s.From - 1, false})
			}
			if s.To < servedversions.Last {
				edges = append(edges, edge{s.To + 1, false})
			}
		} else {
			edges = append(edges, edge{e.Exists.From, false}, edge{e.Exists.To, false})
		}
		for _, ed := range edges {
			checked++
			name := fmt.Sprintf("%s %s at 1.%d", e.APIVersion(), e.Kind, ed.minor)
			r, done := servedAt(t, e.APIVersion(), e.Kind, ed.minor)
			p, isRefused := refused(r)
			switch {
			case ed.served && isRefused:
				t.Errorf("%s: refused, the table serves it: %s", name, p.Message)
			case ed.served && done:
				if len(r.Problems) != 1 || r.Problems[0].Rule != RuleUncheckedVersion || r.Rejected {
					t.Errorf("%s: served, want at most a %s note, got %+v", name, RuleUncheckedVersion, r)
				}
				if legacyscheme.Scheme.Recognizes(schema.FromAPIVersionAndKind(e.APIVersion(), e.Kind)) {
					t.Errorf("%s: noted as unchecked, but kiln's scheme has the version", name)
				}
			case !ed.served && !isRefused:
				t.Errorf("%s: not refused, the table does not serve it; got %+v", name, r)
			case !ed.served:
				use := ""
				for _, v := range servedversions.Versions(e.Group, e.Kind) {
					if v.Served.Has(manifest.KubeVersion{Major: 1, Minor: ed.minor}) {
						use = v.APIVersion()
						break
					}
				}
				if want := "; use apiVersion: " + use; use != "" && !strings.HasSuffix(p.Message, want) {
					t.Errorf("%s: %q, want it to end with %q", name, p.Message, want)
				}
				if want := "no version of " + e.Kind + " is served"; use == "" && !strings.Contains(p.Message, want) {
					t.Errorf("%s: %q, want it to say %q", name, p.Message, want)
				}
			}
		}
	}
	if checked < 300 {
		t.Errorf("only %d edges checked; the table is not what it should be", checked)
	}
}

// TestNewestServedVersionsChecked: every version the newest release serves
// is in kiln's scheme (its fields are checked), so a table that serves a
// version kiln cannot judge at the default --kube-version fails here.
func TestNewestServedVersionsChecked(t *testing.T) {
	for _, e := range servedversions.Table() {
		if e.Served.Has(manifest.LatestKube) && !legacyscheme.Scheme.Recognizes(schema.FromAPIVersionAndKind(e.APIVersion(), e.Kind)) {
			t.Errorf("%s %s: served by %s but not in kiln's scheme", e.APIVersion(), e.Kind, manifest.LatestKube)
		}
	}
}

// TestServedMessages: what each kind of refusal says, for the cases issue
// #25 measured and their neighbours.
func TestServedMessages(t *testing.T) {
	for _, tc := range []struct {
		apiVersion, kind string
		minor            int
		want             string // rule, then the message; "" when served
	}{
		{"extensions/v1beta1", "Ingress", 20, "schema/unchecked-version extensions/v1beta1 Ingress is served by Kubernetes 1.20, but kiln checks objects with the API server code of Kubernetes 1.37, which no longer has this version: its fields are not checked"},
		{"policy/v1beta1", "PodSecurityPolicy", 20, "schema/unchecked-version policy/v1beta1 PodSecurityPolicy is served by Kubernetes 1.20"},
		{"policy/v1beta1", "PodSecurityPolicy", 24, "schema/unchecked-version policy/v1beta1 PodSecurityPolicy is served by Kubernetes 1.24"},
		{"autoscaling/v2beta2", "HorizontalPodAutoscaler", 24, "schema/unchecked-version autoscaling/v2beta2 HorizontalPodAutoscaler is served by Kubernetes 1.24, but kiln checks objects with the API server code of Kubernetes 1.37, which no longer has this version: its fields are not checked (autoscaling/v2, also served by 1.24, would be)"},
		{"batch/v1beta1", "CronJob", 22, ""},
		{"flowcontrol.apiserver.k8s.io/v1beta3", "FlowSchema", 26, ""},
		{"flowcontrol.apiserver.k8s.io/v1beta3", "FlowSchema", 31, ""},
		{"flowcontrol.apiserver.k8s.io/v1beta3", "FlowSchema", 25, "schema/unserved-version flowcontrol.apiserver.k8s.io/v1beta3 FlowSchema is not served before Kubernetes 1.26; use apiVersion: flowcontrol.apiserver.k8s.io/v1beta2"},
		{"flowcontrol.apiserver.k8s.io/v1beta2", "FlowSchema", 29, "schema/unserved-version flowcontrol.apiserver.k8s.io/v1beta2 FlowSchema is no longer served since Kubernetes 1.29; use apiVersion: flowcontrol.apiserver.k8s.io/v1"},
		{"autoscaling/v2", "HorizontalPodAutoscaler", 22, "schema/unserved-version autoscaling/v2 HorizontalPodAutoscaler is not served before Kubernetes 1.23; use apiVersion: autoscaling/v1"},
		{"admissionregistration.k8s.io/v1beta1", "ValidatingAdmissionPolicy", 29, "schema/unserved-version admissionregistration.k8s.io/v1beta1 ValidatingAdmissionPolicy is a beta API that Kubernetes 1.29 serves only where the cluster enables it (--runtime-config); no version of ValidatingAdmissionPolicy is served at Kubernetes 1.29 by default: it has ValidatingAdmissionPolicy as admissionregistration.k8s.io/v1alpha1, served where the cluster enables it (--runtime-config=admissionregistration.k8s.io/v1alpha1=true)"},
		// jobset's workload-aware scheduling examples: the version 1.37 has.
		{"scheduling.k8s.io/v1alpha2", "PodGroup", 37, "schema/unserved-version scheduling.k8s.io/v1alpha2 PodGroup is no longer served since Kubernetes 1.37; no version of PodGroup is served at Kubernetes 1.37 by default: it has PodGroup as scheduling.k8s.io/v1beta1 and scheduling.k8s.io/v1alpha3, served where the cluster enables it (--runtime-config=scheduling.k8s.io/v1beta1=true)"},
		{"admissionregistration.k8s.io/v1alpha1", "ValidatingAdmissionPolicy", 30, "schema/unserved-version admissionregistration.k8s.io/v1alpha1 ValidatingAdmissionPolicy is an alpha API that Kubernetes 1.30 serves only where the cluster enables it (--runtime-config); use apiVersion: admissionregistration.k8s.io/v1"},
		{"admissionregistration.k8s.io/v1beta1", "ValidatingAdmissionPolicy", 27, "schema/unserved-version admissionregistration.k8s.io/v1beta1 ValidatingAdmissionPolicy is not served before Kubernetes 1.28, and then only where the cluster enables it (--runtime-config)"},
		{"storage.k8s.io/v1alpha1", "VolumeAttributesClass", 37, "schema/unserved-version storage.k8s.io/v1alpha1 VolumeAttributesClass is no longer served since Kubernetes 1.35; use apiVersion: storage.k8s.io/v1"},
		{"apps/v1beta1", "Deployment", 16, "schema/unserved-version apps/v1beta1 Deployment is a beta API that Kubernetes 1.16 serves only where the cluster enables it (--runtime-config); use apiVersion: apps/v1"},
		{"policy/v1", "PodSecurityPolicy", 20, "schema/unserved-version policy/v1 PodSecurityPolicy is not served by Kubernetes 1.20 (no release from 1.16 to 1.37 has this version); use apiVersion: policy/v1beta1"},
		{"policy/v1", "PodSecurityPolicy", 37, `schema/unknown-kind policy/v1 PodSecurityPolicy is not a kind the API server knows at Kubernetes 1.37 (group "policy" had PodSecurityPolicy up to 1.24, last as policy/v1beta1); no version of PodSecurityPolicy is served at Kubernetes 1.37`},
		{"resource.k8s.io/v1", "DeviceClass", 20, `schema/unknown-kind resource.k8s.io/v1 DeviceClass is not a kind the API server knows at Kubernetes 1.20 (group "resource.k8s.io" has DeviceClass from 1.31, first as resource.k8s.io/v1alpha3)`},
		{"v1", "Policy", 37, `schema/unknown-kind v1 Policy is not a kind the API server knows (group "" has no kind Policy); no version of Policy is served at Kubernetes 1.37`},
		{"policy/v1", "Eviction", 37, ""},   // no resource of its own: the create path judges it
		{"example.com/v1", "Gizmo", 20, ""}, // a custom resource
		{"settings.k8s.io/v1alpha1", "PodPreset", 19, "schema/unserved-version settings.k8s.io/v1alpha1 PodPreset is an alpha API that Kubernetes 1.19 serves only where the cluster enables it (--runtime-config); no version of PodPreset is served at Kubernetes 1.19"},
		{"settings.k8s.io/v1alpha1", "PodPreset", 37, `schema/unknown-kind settings.k8s.io/v1alpha1 PodPreset is not a kind the API server knows at Kubernetes 1.37 (group "settings.k8s.io" had PodPreset up to 1.19, last as settings.k8s.io/v1alpha1)`},
		{"extensions/v1beta1", "Deployment", 17, "schema/unserved-version extensions/v1beta1 Deployment is a beta API that Kubernetes 1.17 serves only where the cluster enables it (--runtime-config); no version of Deployment is served at Kubernetes 1.17"},
		{"extensions/v1beta1", "Deployment", 19, `schema/unknown-kind extensions/v1beta1 Deployment is not a kind the API server knows at Kubernetes 1.19 (group "extensions" had Deployment up to 1.17, last as extensions/v1beta1)`},
	} {
		name := fmt.Sprintf("%s %s at 1.%d", tc.apiVersion, tc.kind, tc.minor)
		r, done := servedAt(t, tc.apiVersion, tc.kind, tc.minor)
		var got []string
		for _, p := range r.Problems {
			got = append(got, p.Rule+" "+p.Message)
		}
		switch {
		case tc.want == "" && (done || len(got) > 0):
			t.Errorf("%s: want served, got %q", name, got)
		case tc.want != "" && (len(got) != 1 || !strings.HasPrefix(got[0], tc.want)):
			t.Errorf("%s:\n got %q\nwant %q", name, got, tc.want)
		case tc.want != "" && r.Rejected != !strings.HasPrefix(tc.want, RuleUncheckedVersion):
			t.Errorf("%s: rejected = %v", name, r.Rejected)
		}
	}
}
