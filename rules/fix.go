package rules

import (
	"fmt"
	"strings"

	"github.com/kilnhq/kiln/manifest"
)

// Fix is a repair a checker attaches to the diagnostic it reports, as
// go/analysis attaches SuggestedFixes: what kiln fix does to the object so
// that the finding goes away. The checker that knows what is wrong decides
// whether a fix is safe (an apiVersion whose replacement has the same
// schema, native sidecars on a target that has them); kiln fix applies the
// fixes findings carry and knows no rule IDs.
type Fix struct {
	Action FixAction
	// Template is the path of the pod template the repair applies to, as
	// manifest.PodTemplate.Path ("" for a Pod).
	Template string
	// Container is the index in the template's containers[] of the
	// container to make a native sidecar (FixNativeSidecar).
	Container int
	// APIVersion is the apiVersion to set (FixAPIVersion).
	APIVersion string
}

// Fixer returns the repair of a finding at field of o on target kube, or
// nil when none is safe: how a rule family attaches fixes to the findings
// of its rules written as policies (which report no Fix themselves).
type Fixer func(o *manifest.Object, field string, kube manifest.KubeVersion) *Fix

// FixAction names a repair kiln fix knows how to make.
type FixAction string

// The repairs. The securityContext ones set the restricted Pod Security
// value on the pod and every container of a template.
const (
	FixRunAsNonRoot           FixAction = "runAsNonRoot"             // runAsNonRoot: true
	FixSeccompRestricted      FixAction = "seccompProfile"           // seccompProfile RuntimeDefault where unset or not allowed
	FixSeccompBaseline        FixAction = "seccompProfile-baseline"  // Unconfined profiles removed
	FixNoPrivilegeEscalation  FixAction = "allowPrivilegeEscalation" // allowPrivilegeEscalation: false
	FixCapabilitiesRestricted FixAction = "capabilities"             // drop ALL, add only NET_BIND_SERVICE
	FixCapabilitiesBaseline   FixAction = "capabilities-baseline"    // added capabilities beyond baseline removed
	FixNativeSidecar          FixAction = "native-sidecar"           // a container moved to initContainers with restartPolicy: Always
	FixAPIVersion             FixAction = "apiVersion"               // apiVersion set to Fix.APIVersion
)

// Describe says in plain words what kiln fix does for the fix.
func (f *Fix) Describe() string {
	where := "the pod and every container"
	if f.Template != "" {
		where = "the pod template " + f.Template + " and every container"
	}
	switch f.Action {
	case FixRunAsNonRoot:
		return "kiln fix sets runAsNonRoot: true on " + where
	case FixSeccompRestricted:
		return "kiln fix sets seccompProfile type RuntimeDefault on " + where + " where it is unset or not allowed"
	case FixSeccompBaseline:
		return "kiln fix removes the Unconfined seccompProfiles of " + where
	case FixNoPrivilegeEscalation:
		return "kiln fix sets allowPrivilegeEscalation: false on every container of " + strings.TrimSuffix(where, " and every container")
	case FixCapabilitiesRestricted:
		return "kiln fix drops ALL capabilities and adds back only NET_BIND_SERVICE where it was added, on every container"
	case FixCapabilitiesBaseline:
		return "kiln fix removes the added capabilities beyond the baseline level, on every container"
	case FixNativeSidecar:
		return fmt.Sprintf("kiln fix moves containers[%d] to initContainers with restartPolicy: Always (a native sidecar)", f.Container)
	case FixAPIVersion:
		return "kiln fix sets apiVersion: " + f.APIVersion
	}
	return "kiln fix repairs it (" + string(f.Action) + ")"
}
