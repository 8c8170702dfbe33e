package psa

import (
	"fmt"
	"sort"
	"strings"

	"github.com/kilnhq/kiln/rules"
	"k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"
)

// ruleDoc describes an upstream check for `kiln rules` and `kiln explain`.
type ruleDoc struct {
	summary, doc string
	// fail and pass are the examples (see pod); fail is linted at the
	// check's level and at failVersion (default latest), pass at kiln's defaults.
	fail, pass  string
	failVersion string
}

// The securityContexts of a Pod that passes the restricted profile, in flow
// style so that each example stays short and shows only what it changes.
const (
	podSecurity = "runAsNonRoot: true, seccompProfile: {type: RuntimeDefault}"
	ctrSecurity = "allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}"
)

// pod is an example Pod: the pod securityContext (flow style), more pod spec
// lines, the container's securityContext (flow style) and more container
// lines. With podSecurity and ctrSecurity and nothing more it passes the
// restricted profile and every other rule, so an example shows its rule only.
func pod(podSC, spec, ctrSC, ctr string) string {
	s := "apiVersion: v1\nkind: Pod\nmetadata: {name: app, namespace: shop}\nspec:\n"
	if podSC != "" {
		s += "  securityContext: {" + podSC + "}\n"
	}
	s += "  containers:\n  - name: app\n    image: registry.example/app:1.0\n"
	if ctrSC != "" {
		s += "    securityContext: {" + ctrSC + "}\n"
	}
	return s + indent(ctr, "    ") + indent(spec, "  ")
}

// ctrWith is a container securityContext that passes restricted, plus more fields.
func ctrWith(more string) string { return ctrSecurity + ", " + more }

// podWith is a pod securityContext that passes restricted, plus more fields.
func podWith(more string) string { return podSecurity + ", " + more }

func indent(s, by string) string {
	if s == "" {
		return ""
	}
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	return by + strings.Join(lines, "\n"+by) + "\n"
}

var docs = map[policy.CheckID]ruleDoc{
	"allowPrivilegeEscalation": {
		summary: "containers must set securityContext.allowPrivilegeEscalation=false",
		doc:     "A process can gain more privileges than its parent (setuid binaries, file capabilities) unless no_new_privs is set. The restricted profile requires every container to turn privilege escalation off explicitly.",
		fail:    pod(podSecurity, "", "capabilities: {drop: [ALL]}", ""),
		pass:    pod(podSecurity, "", ctrSecurity, ""),
	},
	"appArmorProfile": {
		summary: "AppArmor profiles must not be unconfined",
		doc:     "AppArmor confines what a container may do on the node. The baseline profile forbids turning it off (type Unconfined, or the unconfined annotation value); RuntimeDefault and Localhost profiles are allowed.",
		fail:    pod(podSecurity, "", ctrWith("appArmorProfile: {type: Unconfined}"), ""),
		pass:    pod(podSecurity, "", ctrWith("appArmorProfile: {type: RuntimeDefault}"), ""),
	},
	"capabilities_baseline": {
		summary: "containers must not add capabilities beyond the default set",
		doc:     "Linux capabilities split root's power into pieces; SYS_ADMIN, NET_ADMIN and the like let a container reach the node. The baseline profile allows adding only the capabilities a container runtime grants by default.",
		fail:    pod(podSecurity, "", "allowPrivilegeEscalation: false, capabilities: {drop: [ALL], add: [SYS_ADMIN]}", ""),
		pass:    pod(podSecurity, "", "allowPrivilegeEscalation: false, capabilities: {drop: [ALL], add: [NET_BIND_SERVICE]}", ""),
	},
	"capabilities_restricted": {
		summary: "containers must drop ALL capabilities and may add only NET_BIND_SERVICE",
		doc:     "The restricted profile requires every container to drop all Linux capabilities and allows adding back only NET_BIND_SERVICE (binding ports below 1024).",
		fail:    pod(podSecurity, "", "allowPrivilegeEscalation: false, capabilities: {drop: [ALL], add: [CHOWN]}", ""),
		pass:    pod(podSecurity, "", "allowPrivilegeEscalation: false, capabilities: {drop: [ALL], add: [NET_BIND_SERVICE]}", ""),
	},
	"hostNamespaces": {
		summary: "pods must not share the node's network, PID or IPC namespace",
		doc:     "hostNetwork, hostPID and hostIPC let a pod see and talk to everything on the node: its interfaces and ports, its processes, its shared memory. The baseline profile forbids all three.",
		fail:    pod(podSecurity, "hostNetwork: true", ctrSecurity, ""),
		pass:    pod(podSecurity, "hostNetwork: false", ctrSecurity, ""),
	},
	"hostPathVolumes": {
		summary: "pods must not mount hostPath volumes",
		doc:     "A hostPath volume mounts a directory of the node into the pod, which can expose credentials, the container runtime socket or the whole file system. The baseline profile forbids them.",
		fail:    pod(podSecurity, "volumes: [{name: data, hostPath: {path: /var/lib/data}}]", ctrSecurity, ""),
		pass:    pod(podSecurity, "volumes: [{name: data, emptyDir: {}}]", ctrSecurity, ""),
	},
	"hostPorts": {
		summary: "containers must not bind host ports",
		doc:     "A hostPort opens a port on the node's own addresses, bypassing network policy and tying the pod to nodes where the port is free. The baseline profile forbids them (in a hostNetwork Pod every containerPort is a host port).",
		fail:    pod(podSecurity, "", ctrSecurity, "ports: [{containerPort: 8080, hostPort: 8080}]"),
		pass:    pod(podSecurity, "", ctrSecurity, "ports: [{containerPort: 8080}]"),
	},
	"hostProbesAndHostLifecycle": {
		summary: "probes and lifecycle handlers must not set a host",
		doc:     "A probe or lifecycle handler with httpGet.host or tcpSocket.host makes the kubelet connect to any address on the pod's behalf, from the node's network. The baseline profile forbids setting the host.",
		fail:    pod(podSecurity, "", ctrSecurity, "livenessProbe: {httpGet: {host: 10.0.0.1, port: 8080}}"),
		pass:    pod(podSecurity, "", ctrSecurity, "livenessProbe: {httpGet: {port: 8080}}"),
	},
	"privileged": {
		summary: "containers must not run privileged",
		doc:     "A privileged container has every capability and every device of the node: it is root on the node. The baseline profile forbids it.",
		fail:    pod(podSecurity, "", "privileged: true, capabilities: {drop: [ALL]}", ""), // privileged is incompatible with allowPrivilegeEscalation: false
		pass:    pod(podSecurity, "", ctrWith("privileged: false"), ""),
	},
	"procMount": {
		summary:     "containers must use the default /proc mount (unless in a user namespace)",
		doc:         "The default /proc mount masks paths that reveal or change the node. The baseline profile requires it, except (from v1.35) for pods in a user namespace (hostUsers: false).",
		fail:        pod(podSecurity, "hostUsers: false", ctrWith("procMount: Unmasked"), ""),
		pass:        pod(podSecurity, "hostUsers: false", ctrWith("procMount: Default"), ""),
		failVersion: "v1.34", // a user namespace allows it from v1.35, and the server wants one for Unmasked
	},
	"procMount_restricted": {
		summary: "containers must use the default /proc mount",
		doc:     "The restricted profile requires the default, masked /proc mount for every container, even in a user namespace.",
		fail:    pod(podSecurity, "hostUsers: false", ctrWith("procMount: Unmasked"), ""),
		pass:    pod(podSecurity, "hostUsers: false", ctrWith("procMount: Default"), ""),
	},
	"restrictedVolumes": {
		summary: "pods may use only ephemeral, projected and claim-based volume types",
		doc:     "The restricted profile allows only configMap, csi, downwardAPI, emptyDir, ephemeral, image, persistentVolumeClaim, projected and secret volumes; other types mount storage directly, outside the cluster's access control.",
		fail:    pod(podSecurity, "volumes: [{name: data, iscsi: {targetPortal: 10.0.0.2:3260, iqn: iqn.2001-04.com.example:data, lun: 0}}]", ctrSecurity, ""),
		pass:    pod(podSecurity, "volumes: [{name: data, persistentVolumeClaim: {claimName: data}}]", ctrSecurity, ""),
	},
	"runAsNonRoot": {
		summary: "pods must set runAsNonRoot=true",
		doc:     "Running as root inside a container makes every escape worse. The restricted profile requires runAsNonRoot=true on the pod or on every container (from v1.35 a pod in a user namespace may leave it unset).",
		fail:    pod("runAsNonRoot: false, seccompProfile: {type: RuntimeDefault}", "", ctrSecurity, ""),
		pass:    pod(podSecurity, "", ctrSecurity, ""),
	},
	"runAsUser": {
		summary: "pods must not run as user ID 0",
		doc:     "runAsUser: 0 runs the container as root whatever the image says. The restricted profile forbids it on the pod and on every container.",
		fail:    pod(podWith("runAsUser: 0"), "", ctrSecurity, ""),
		pass:    pod(podWith("runAsUser: 1000"), "", ctrSecurity, ""),
	},
	"seLinuxOptions": {
		summary: "SELinux options must not set a custom user, role or type",
		doc:     "A custom SELinux user or role, or a type other than the container types, can lift the confinement SELinux gives a container. The baseline profile allows only the container_t, container_init_t, container_kvm_t (and from v1.31 container_engine_t) types and a level.",
		fail:    pod(podSecurity, "", ctrWith("seLinuxOptions: {type: spc_t}"), ""),
		pass:    pod(podSecurity, "", ctrWith("seLinuxOptions: {type: container_t}"), ""),
	},
	"seccompProfile_baseline": {
		summary: "seccomp must not be unconfined",
		doc:     "seccomp limits the system calls a container can make. The baseline profile forbids turning it off (type Unconfined or the unconfined annotation).",
		fail:    pod(podSecurity, "", ctrWith("seccompProfile: {type: Unconfined}"), ""),
		pass:    pod(podSecurity, "", ctrWith("seccompProfile: {type: RuntimeDefault}"), ""),
	},
	"seccompProfile_restricted": {
		summary: "pods must set a RuntimeDefault or Localhost seccomp profile",
		doc:     "The restricted profile requires a seccomp profile, RuntimeDefault or Localhost, on the pod or on every container (Windows pods are exempt).",
		fail:    pod("runAsNonRoot: true", "", ctrSecurity, ""),
		pass:    pod(podSecurity, "", ctrSecurity, ""),
	},
	"sysctls": {
		summary: "pods may set only namespaced, safe sysctls",
		doc:     "Some sysctls change the whole node. The baseline profile allows only a fixed list of safe, namespaced sysctls (the list grows with the policy version).",
		fail:    pod(podWith("sysctls: [{name: kernel.msgmax, value: \"65536\"}]"), "", ctrSecurity, ""),
		pass:    pod(podWith("sysctls: [{name: net.ipv4.ip_local_port_range, value: \"1024 65535\"}]"), "", ctrSecurity, ""),
	},
	"windowsHostProcess": {
		summary: "Windows pods must not run as host processes",
		doc:     "A Windows HostProcess container runs directly on the node with the node's privileges. The baseline profile forbids it.",
		fail:    pod(podSecurity, "hostNetwork: true", ctrWith("windowsOptions: {hostProcess: true}"), ""),
		pass:    pod(podSecurity, "", ctrWith("windowsOptions: {hostProcess: false}"), ""),
	},
}

// buildRules makes one rule per upstream check, plus the label and decode rules.
func buildRules(checks []policy.Check) []*rules.Rule {
	var out []*rules.Rule
	for _, c := range checks {
		d, ok := docs[c.ID]
		if !ok {
			d = ruleDoc{summary: fmt.Sprintf("upstream Pod Security check %s", c.ID),
				doc: fmt.Sprintf("The %s Pod Security check of k8s.io/pod-security-admission.", c.ID)}
		}
		doc := d.doc + fmt.Sprintf("\n\nLevel: %s (from policy version %s). Judged by k8s.io/pod-security-admission, the API server's own check; "+
			"an enforce failure is an error, a warn or audit failure a warning.", c.Level, &c.Versions[0].MinimumVersion)
		r := &rules.Rule{ID: RuleID(c.ID), Severity: rules.Error, Summary: d.summary, Doc: doc}
		if d.fail != "" {
			r.Fail, r.Pass = d.fail, d.pass
			var flags []string
			if c.Level == api.LevelBaseline {
				// At kiln's default level (restricted) a restricted twin may report instead.
				flags = append(flags, "--psa-level baseline")
			}
			if d.failVersion != "" {
				flags = append(flags, "--psa-version "+d.failVersion)
			}
			if len(flags) > 0 {
				r.Fail = "# kiln lint " + strings.Join(flags, " ") + "\n" + r.Fail
			}
		}
		out = append(out, r)
	}
	out = append(out,
		&rules.Rule{
			ID:       InvalidLabelRule,
			Severity: rules.Error,
			Summary:  "pod-security.kubernetes.io labels must have valid values",
			Doc: "A Pod Security label on a Namespace has a value the API server cannot parse. Levels are privileged, baseline or restricted; " +
				"versions are latest or v1.N. The PodSecurity admission plugin refuses to create or update such a Namespace. " +
				"A namespace that already carries the label (from before the plugin was on) is evaluated with a fallback: an invalid enforce level " +
				"enforces restricted, an invalid version means latest, an invalid warn or audit level turns that mode off; kiln judges the " +
				"namespace's pods that way.",
			Fail: "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: shop\n  labels:\n    pod-security.kubernetes.io/enforce: strict\n",
			Pass: "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: shop\n  labels:\n    pod-security.kubernetes.io/enforce: restricted\n",
		},
		&rules.Rule{
			ID:       NotOnRule,
			Severity: rules.Info,
			Summary:  "workloads not judged: the target Kubernetes version does not run Pod Security admission",
			Doc: "The PodSecurity admission plugin is on by default from Kubernetes 1.23 (beta; GA in 1.25). In 1.22 it is alpha behind the " +
				"PodSecurity feature gate, off by default, and older releases do not have it: their API servers admit every pod whatever its " +
				"namespace's pod-security.kubernetes.io labels say. At such a --kube-version kiln runs no psa/* rule and notes once per kind " +
				"the workloads it did not judge.",
			Fail: "# kiln lint --kube-version 1.22\n" + pod("", "", "", ""),
			Pass: "# kiln lint --kube-version 1.23\n" + pod(podSecurity, "", ctrSecurity, ""),
		},
		&rules.Rule{
			ID:       DecodeRule,
			Severity: rules.Error,
			Summary:  "pod templates must decode as the API server decodes them",
			Doc: "A field of the pod template has a value of the wrong type (a string where a boolean or a number belongs, a list " +
				"where a mapping belongs), so the API server would reject the object and Pod Security cannot judge it.",
			Fail: pod("runAsNonRoot: \"yes\", seccompProfile: {type: RuntimeDefault}", "", ctrSecurity, ""),
			Pass: pod(podSecurity, "", ctrSecurity, ""),
		},
	)
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}
