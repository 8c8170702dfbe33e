package fix

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/kilnhq/kiln/internal/yamlnode"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// The restricted Pod Security profile's fixable checks. Each fixer changes
// only values that fail the check; a value the user set that passes stays.
// Pods with spec.os.name: windows are exempt from the seccomp, privilege
// escalation and capabilities checks upstream, and are left alone for them.

// container is one container mapping of a pod spec.
type container struct {
	list  string // containers, initContainers or ephemeralContainers
	index int
	node  *yaml.Node
}

func (c container) String() string {
	name := yamlnode.Scalar(yamlnode.Value(c.node, "name"))
	if name == "" {
		name = c.list + "[" + strconv.Itoa(c.index) + "]"
	}
	return fmt.Sprintf("container %q", name)
}

// containersOf lists the container mappings of a pod spec: init, regular, ephemeral.
func containersOf(spec *yaml.Node) []container {
	var out []container
	for _, list := range []string{"initContainers", "containers", "ephemeralContainers"} {
		seq := yamlnode.Value(spec, list)
		if seq == nil || seq.Kind != yaml.SequenceNode {
			continue
		}
		for i, c := range seq.Content {
			if c.Kind == yaml.MappingNode {
				out = append(out, container{list, i, c})
			}
		}
	}
	return out
}

func isWindows(spec *yaml.Node) bool {
	return yamlnode.Scalar(yamlnode.Value(yamlnode.Value(spec, "os"), "name")) == "windows"
}

// fixRunAsNonRoot sets runAsNonRoot: true on the pod unless every container
// already does, and flips an explicit false (pod or container) to true.
func fixRunAsNonRoot(spec *yaml.Node) []string {
	var notes []string
	allTrue := true
	for _, c := range containersOf(spec) {
		v := yamlnode.Value(yamlnode.Value(c.node, "securityContext"), "runAsNonRoot")
		if isBool(v, true) {
			continue
		}
		allTrue = false
		if isBool(v, false) {
			setScalar(yamlnode.Value(c.node, "securityContext"), "runAsNonRoot", boolean(true))
			notes = append(notes, c.String()+": runAsNonRoot false → true")
		}
	}
	pod := yamlnode.Value(yamlnode.Value(spec, "securityContext"), "runAsNonRoot")
	switch {
	case isBool(pod, true):
	case isBool(pod, false):
		setScalar(yamlnode.Value(spec, "securityContext"), "runAsNonRoot", boolean(true))
		notes = append(notes, "pod: runAsNonRoot false → true")
	case !allTrue:
		sc := mapping(spec, "securityContext")
		if sc == nil {
			return notes
		}
		setScalar(sc, "runAsNonRoot", boolean(true))
		notes = append(notes, "pod: set runAsNonRoot: true")
	}
	return notes
}

// fixRunAsNonRootAs is fixRunAsNonRoot, then: with uid > 0, runAsUser: uid
// on the pod when neither it nor every container names a user; else a
// caution naming the containers whose user only the image knows. With
// runAsNonRoot: true the kubelet refuses to start a container whose
// effective user is root (CreateContainerConfigError), and many official
// images (postgres, nginx, redis, mysql) run as root by default.
func fixRunAsNonRootAs(spec *yaml.Node, uid int64) (changes []string, caution string) {
	changes = fixRunAsNonRoot(spec)
	if len(changes) == 0 {
		return nil, ""
	}
	if yamlnode.Value(yamlnode.Value(spec, "securityContext"), "runAsUser") != nil {
		return changes, ""
	}
	var unknown []string
	for _, c := range containersOf(spec) {
		if yamlnode.Value(yamlnode.Value(c.node, "securityContext"), "runAsUser") == nil {
			unknown = append(unknown, c.String())
		}
	}
	if len(unknown) == 0 {
		return changes, ""
	}
	if uid > 0 {
		if sc := mapping(spec, "securityContext"); sc != nil {
			setScalar(sc, "runAsUser", integer(uid))
			return append(changes, fmt.Sprintf("pod: set runAsUser: %d", uid)), ""
		}
	}
	return changes, fmt.Sprintf("runAsNonRoot: true, but %s name no runAsUser, so the image's USER decides: if it is root (the default of many official images: postgres, nginx, redis, mysql) the kubelet refuses to start the container (CreateContainerConfigError); check the image, or run kiln fix --run-as-user N with a non-root UID the image supports",
		strings.Join(unknown, ", "))
}

// validSeccomp reports whether a seccompProfile passes the restricted check.
func validSeccomp(p *yaml.Node) bool {
	t := yamlnode.Scalar(yamlnode.Value(p, "type"))
	return t == "RuntimeDefault" || t == "Localhost"
}

// fixSeccomp turns Unconfined profiles into RuntimeDefault and, for the
// restricted check, sets the pod's profile when some container lacks a valid one.
func fixSeccomp(spec *yaml.Node, restricted bool) []string {
	if isWindows(spec) {
		return nil
	}
	var notes []string
	allValid := true
	for _, c := range containersOf(spec) {
		p := yamlnode.Value(yamlnode.Value(c.node, "securityContext"), "seccompProfile")
		if isNull(p) {
			allValid = false
			continue
		}
		if p.Kind != yaml.MappingNode || validSeccomp(p) {
			continue
		}
		t := yamlnode.Scalar(yamlnode.Value(p, "type"))
		if restricted || t == "Unconfined" {
			setScalar(p, "type", str("RuntimeDefault"))
			remove(p, "localhostProfile")
			notes = append(notes, fmt.Sprintf("%s: seccompProfile.type %s → RuntimeDefault", c, orUnset(t)))
		}
	}
	p := yamlnode.Value(yamlnode.Value(spec, "securityContext"), "seccompProfile")
	switch {
	case !isNull(p) && p.Kind == yaml.MappingNode && validSeccomp(p):
	case !isNull(p) && p.Kind == yaml.MappingNode:
		t := yamlnode.Scalar(yamlnode.Value(p, "type"))
		if restricted || t == "Unconfined" {
			setScalar(p, "type", str("RuntimeDefault"))
			remove(p, "localhostProfile")
			notes = append(notes, fmt.Sprintf("pod: seccompProfile.type %s → RuntimeDefault", orUnset(t)))
		}
	case isNull(p) && restricted && !allValid:
		sc := mapping(spec, "securityContext")
		if sc == nil {
			return notes
		}
		set(sc, "seccompProfile", &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map",
			Content: []*yaml.Node{str("type"), str("RuntimeDefault")}})
		notes = append(notes, "pod: set seccompProfile.type: RuntimeDefault")
	}
	return notes
}

func orUnset(s string) string {
	if s == "" {
		return "(unset)"
	}
	return s
}

// fixPrivilegeEscalation sets allowPrivilegeEscalation: false on every
// container that does not, but a privileged one or one that adds
// CAP_SYS_ADMIN: the API server refuses the pair (ValidateSecurityContext).
func fixPrivilegeEscalation(spec *yaml.Node) []string {
	if isWindows(spec) {
		return nil
	}
	var notes []string
	for _, c := range containersOf(spec) {
		sc := yamlnode.Value(c.node, "securityContext")
		if isBool(yamlnode.Value(sc, "allowPrivilegeEscalation"), false) || escalationRequired(sc) {
			continue
		}
		sc = mapping(c.node, "securityContext")
		if sc == nil {
			continue
		}
		setScalar(sc, "allowPrivilegeEscalation", boolean(false))
		notes = append(notes, c.String()+": set allowPrivilegeEscalation: false")
	}
	return notes
}

// escalationRequired reports whether a container's securityContext node
// is privileged or adds CAP_SYS_ADMIN (see psa.PrivilegeEscalationRequired).
func escalationRequired(sc *yaml.Node) bool {
	if isBool(yamlnode.Value(sc, "privileged"), true) {
		return true
	}
	add := yamlnode.Value(yamlnode.Value(sc, "capabilities"), "add")
	if add == nil || add.Kind != yaml.SequenceNode {
		return false
	}
	for _, a := range add.Content {
		if a.Kind == yaml.ScalarNode && a.Value == "CAP_SYS_ADMIN" {
			return true
		}
	}
	return false
}

// baselineCaps are the capabilities the baseline profile allows in capabilities.add.
var baselineCaps = map[string]bool{
	"AUDIT_WRITE": true, "CHOWN": true, "DAC_OVERRIDE": true, "FOWNER": true, "FSETID": true,
	"KILL": true, "MKNOD": true, "NET_BIND_SERVICE": true, "SETFCAP": true, "SETGID": true,
	"SETPCAP": true, "SETUID": true, "SYS_CHROOT": true,
}

// restrictedCaps is the one capability the restricted profile allows in capabilities.add.
var restrictedCaps = map[string]bool{"NET_BIND_SERVICE": true}

// fixCapabilities makes every container drop ALL and add nothing but
// NET_BIND_SERVICE, the one capability the restricted profile allows.
func fixCapabilities(spec *yaml.Node) []string {
	if isWindows(spec) {
		return nil
	}
	var notes []string
	for _, c := range containersOf(spec) {
		caps := yamlnode.Value(yamlnode.Value(c.node, "securityContext"), "capabilities")
		if !isNull(caps) && caps.Kind != yaml.MappingNode {
			continue
		}
		if !dropsAll(yamlnode.Value(caps, "drop")) {
			sc := mapping(c.node, "securityContext")
			if sc == nil {
				continue
			}
			caps = mapping(sc, "capabilities")
			if caps == nil {
				continue
			}
			drop := yamlnode.Value(caps, "drop")
			if !isNull(drop) && drop.Kind == yaml.SequenceNode {
				drop.Content = append(drop.Content, str("ALL"))
			} else {
				set(caps, "drop", &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Style: yaml.FlowStyle,
					Content: []*yaml.Node{str("ALL")}})
			}
			notes = append(notes, c.String()+": capabilities.drop += ALL")
		}
		notes = append(notes, removeAdded(c, caps, restrictedCaps, "restricted")...)
	}
	return notes
}

// fixCapabilitiesBaseline removes the added capabilities the baseline profile does not allow.
func fixCapabilitiesBaseline(spec *yaml.Node) []string {
	var notes []string
	for _, c := range containersOf(spec) {
		caps := yamlnode.Value(yamlnode.Value(c.node, "securityContext"), "capabilities")
		if !isNull(caps) && caps.Kind == yaml.MappingNode {
			notes = append(notes, removeAdded(c, caps, baselineCaps, "baseline")...)
		}
	}
	return notes
}

// removeAdded drops the entries of capabilities.add that are not allowed,
// and the add list itself when that empties it.
func removeAdded(c container, caps *yaml.Node, allowed map[string]bool, level string) []string {
	add := yamlnode.Value(caps, "add")
	if isNull(add) || add.Kind != yaml.SequenceNode {
		return nil
	}
	var notes []string
	kept := add.Content[:0:0]
	for _, a := range add.Content {
		if a.Kind == yaml.ScalarNode && allowed[a.Value] {
			kept = append(kept, a)
			continue
		}
		notes = append(notes, fmt.Sprintf("%s: removed capability %s from capabilities.add (not allowed by the %s profile)", c, a.Value, level))
	}
	if len(kept) == len(add.Content) {
		return nil
	}
	if len(kept) == 0 {
		remove(caps, "add")
	} else {
		add.Content = kept
	}
	return notes
}

func dropsAll(drop *yaml.Node) bool {
	if drop == nil || drop.Kind != yaml.SequenceNode {
		return false
	}
	for _, d := range drop.Content {
		if d.Kind == yaml.ScalarNode && d.Value == "ALL" {
			return true
		}
	}
	return false
}
