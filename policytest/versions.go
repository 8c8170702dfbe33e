package policytest

import (
	"fmt"

	"github.com/kilnhq/kiln/manifest"
)

// policyVersion is where one version of an admission policy API is served
// (from k8s.io/kubernetes pkg/registry/admissionregistration/rest, 1.26 to
// 1.37): From and To are minors (To 0: still served), OnByDefault says
// whether a cluster serves it without --runtime-config.
type policyVersion struct {
	From, To    int
	OnByDefault bool
}

var policyVersions = map[string]policyVersion{
	"ValidatingAdmissionPolicy/v1alpha1": {From: 26, To: 32},
	"ValidatingAdmissionPolicy/v1beta1":  {From: 28},
	"ValidatingAdmissionPolicy/v1":       {From: 30, OnByDefault: true},
	"MutatingAdmissionPolicy/v1alpha1":   {From: 32},
	"MutatingAdmissionPolicy/v1beta1":    {From: 34},
	"MutatingAdmissionPolicy/v1":         {From: 36, OnByDefault: true},
}

// versionNote says which Kubernetes versions serve a policy's or binding's
// API version, and whether target kube does ("" for an unknown one).
func versionNote(o *manifest.Object, kube manifest.KubeVersion) string {
	family := "ValidatingAdmissionPolicy"
	if o.Kind == "MutatingAdmissionPolicy" || o.Kind == "MutatingAdmissionPolicyBinding" {
		family = "MutatingAdmissionPolicy"
	}
	v, ok := policyVersions[family+"/"+o.Version()]
	if !ok {
		return ""
	}
	span := fmt.Sprintf("Kubernetes 1.%d and later", v.From)
	if v.To != 0 {
		span = fmt.Sprintf("Kubernetes 1.%d to 1.%d", v.From, v.To)
	}
	how := "on by default"
	if !v.OnByDefault {
		how = "off by default: the API server needs --runtime-config=admissionregistration.k8s.io/" + o.Version() + "=true"
		if v.From < 30 && family == "ValidatingAdmissionPolicy" {
			how += " (and before 1.30 the ValidatingAdmissionPolicy feature gate)"
		}
	}
	served := kube.Minor >= v.From && (v.To == 0 || kube.Minor <= v.To)
	at := fmt.Sprintf("; %s serves it", kube)
	if !served {
		at = fmt.Sprintf("; %s does not serve it", kube)
	}
	return fmt.Sprintf("%s %q is %s: served by %s, %s%s; kiln evaluates it as v1",
		o.Kind, o.Name, o.APIVersion, span, how, at)
}
