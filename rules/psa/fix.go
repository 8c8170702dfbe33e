package psa

import (
	"maps"
	"slices"

	"github.com/kilnhq/kiln/rules"
	corev1 "k8s.io/api/core/v1"
)

// fixActions are the checks kiln fix repairs, by rule ID, and how.
var fixActions = map[string]rules.FixAction{
	"psa/runAsNonRoot":              rules.FixRunAsNonRoot,
	"psa/seccompProfile_restricted": rules.FixSeccompRestricted,
	"psa/seccompProfile_baseline":   rules.FixSeccompBaseline,
	"psa/allowPrivilegeEscalation":  rules.FixNoPrivilegeEscalation,
	"psa/capabilities_restricted":   rules.FixCapabilitiesRestricted,
	"psa/capabilities_baseline":     rules.FixCapabilitiesBaseline,
}

// FixableRules lists the psa rules whose findings carry a fix, sorted.
func FixableRules() []string { return slices.Sorted(maps.Keys(fixActions)) }

// fixFor is the fix of a rule's finding on the pod template at path (nil: none).
func fixFor(rule, template string) *rules.Fix {
	a, ok := fixActions[rule]
	if !ok {
		return nil
	}
	return &rules.Fix{Action: a, Template: template}
}

// fixOn is the fix of a rule's finding on a pod template whose spec is
// spec, nil when kiln fix would change nothing the API server accepts:
// allowPrivilegeEscalation: false is refused next to privileged: true or
// an added CAP_SYS_ADMIN (ValidateSecurityContext), so kiln fix sets it
// only on the other containers, and offers no fix when there are none.
func fixOn(rule, template string, spec *corev1.PodSpec) *rules.Fix {
	f := fixFor(rule, template)
	if f == nil || f.Action != rules.FixNoPrivilegeEscalation {
		return f
	}
	for _, c := range allContainers(spec) {
		sc := c.SecurityContext
		if sc != nil && sc.AllowPrivilegeEscalation != nil && !*sc.AllowPrivilegeEscalation {
			continue
		}
		if !PrivilegeEscalationRequired(sc) {
			return f
		}
	}
	return nil
}

// PrivilegeEscalationRequired reports whether the API server refuses
// allowPrivilegeEscalation: false on a container with this security
// context: it is privileged or adds CAP_SYS_ADMIN.
func PrivilegeEscalationRequired(sc *corev1.SecurityContext) bool {
	if sc == nil {
		return false
	}
	if sc.Privileged != nil && *sc.Privileged {
		return true
	}
	if sc.Capabilities != nil {
		for _, c := range sc.Capabilities.Add {
			if c == "CAP_SYS_ADMIN" {
				return true
			}
		}
	}
	return false
}

// allContainers are the security contexts' holders of a pod spec: init,
// regular and ephemeral containers.
func allContainers(spec *corev1.PodSpec) []corev1.Container {
	out := append(append([]corev1.Container(nil), spec.InitContainers...), spec.Containers...)
	for _, e := range spec.EphemeralContainers {
		out = append(out, corev1.Container(e.EphemeralContainerCommon))
	}
	return out
}
