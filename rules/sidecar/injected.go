package sidecar

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules"
	"github.com/kilnhq/kiln/rules/internal/podutil"
)

// InjectedInJob is the rule ID of the mesh-injection check (Go: it needs the
// pod's Namespace as well as the pod).
const InjectedInJob = "sidecar/injected-in-job"

// Checker reports sidecar/injected-in-job.
var Checker = &rules.Checker{Name: "sidecar", Rules: ruleList, Prepare: prepare, Requires: []rules.Context{rules.Namespaces}}

// Injection settings of the meshes kiln knows (their webhooks' documented
// selectors and annotations).
const (
	// Linkerd: annotation linkerd.io/inject (enabled, ingress, disabled) on the
	// pod template or its Namespace; native sidecars from Linkerd 2.15 with
	// config.alpha… (2.15) or config.beta.linkerd.io/proxy-enable-native-sidecar,
	// on either, or proxy.nativeSidecar=true at install (off by default).
	linkerdInject      = "linkerd.io/inject"
	linkerdNativeBeta  = "config.beta.linkerd.io/proxy-enable-native-sidecar"
	linkerdNativeAlpha = "config.alpha.linkerd.io/proxy-enable-native-sidecar"
	// Istio: Namespace label istio-injection=enabled or istio.io/rev=<rev>,
	// pod label sidecar.istio.io/inject ("true"/"false"; the annotation of
	// the same name is the older, still honoured form); native sidecars with
	// pod annotation sidecar.istio.io/nativeSidecar, or by default from
	// Istio 1.27 where the cluster supports them.
	istioNamespaceLabel = "istio-injection"
	istioRevLabel       = "istio.io/rev"
	istioInject         = "sidecar.istio.io/inject"
	istioNative         = "sidecar.istio.io/nativeSidecar"
)

// namespaceMeta is what a Namespace in the input says about injection.
type namespaceMeta struct{ labels, annotations map[string]string }

// injectionMeta keeps of a Namespace's labels and annotations the ones the
// injection rules read (none, for most): a large repository's Namespaces
// are held for the whole run.
func injectionMeta(o *manifest.Object) namespaceMeta {
	pick := func(from map[string]string, keys ...string) map[string]string {
		var out map[string]string
		for _, k := range keys {
			if v, ok := from[k]; ok {
				if out == nil {
					out = map[string]string{}
				}
				out[k] = v
			}
		}
		return out
	}
	return namespaceMeta{
		labels:      pick(o.Labels, istioNamespaceLabel, istioRevLabel),
		annotations: pick(o.Annotations, linkerdInject, linkerdNativeBeta, linkerdNativeAlpha),
	}
}

func prepare(p *rules.Pass) (rules.Judge, error) {
	nss := map[string]namespaceMeta{}
	for _, o := range p.Objects {
		if o.Kind == "Namespace" && o.Group() == "" && o.Name != "" {
			if _, seen := nss[o.Name]; !seen {
				nss[o.Name] = injectionMeta(o)
			}
		}
	}
	kube := p.Options.KubeVersion
	return func(o *manifest.Object) {
		if !runsToCompletion(o) {
			return
		}
		content, err := o.Content()
		if err != nil || content == nil {
			return
		}
		ns := nss[o.Namespace]
		if o.Namespace == "" {
			ns = nss["default"]
		}
		for _, t := range manifest.PodTemplatesOf(o) {
			meta := podutil.Map(podutil.Spec(content, t.Path), "metadata")
			if t.Path == "" {
				meta = podutil.Map(content, "metadata")
			}
			labels, annotations := stringMap(podutil.Map(meta, "labels")), stringMap(podutil.Map(meta, "annotations"))
			containers := podutil.Containers(content, t.SpecPath())
			for _, inj := range injections(o, t, labels, annotations, ns, kube) {
				if stopsProxy(containers, inj.mesh) {
					continue
				}
				p.Report(rules.Diagnostic{Rule: InjectedInJob, Severity: inj.severity, Object: o, Field: inj.field, Message: inj.message})
			}
		}
	}, nil
}

// runsToCompletion: Job, CronJob and JobSet pods, bare Pods with restartPolicy Never or OnFailure.
func runsToCompletion(o *manifest.Object) bool {
	switch g := o.Group(); {
	case g == "batch" && (o.Kind == "Job" || o.Kind == "CronJob"):
		return true
	case g == manifest.JobSetGroup && o.Kind == "JobSet":
		return true
	}
	return false
}

func stringMap(m map[string]any) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		if s, ok := v.(string); ok {
			out[k] = s
		}
	}
	return out
}

type injection struct {
	mesh     string // "linkerd" or "istio"
	severity rules.Severity
	field    string
	message  string
}

// injections returns the classic proxies a mesh will inject into the pod template.
func injections(o *manifest.Object, t manifest.PodTemplate, labels, annotations map[string]string, ns namespaceMeta, kube manifest.KubeVersion) []injection {
	var out []injection
	what := o.Kind + " pod"
	if t.Name != "" {
		what = fmt.Sprintf("pod of replicated job %q", t.Name)
	}
	metaField := func(key, name string) string {
		return t.MetadataPath() + "." + key + "[" + strconv.Quote(name) + "]"
	}
	native129 := !kube.Less(manifest.KubeVersion{Major: 1, Minor: 29})

	// Linkerd.
	via, field := "", ""
	switch v, set := annotations[linkerdInject]; {
	case set && (v == "enabled" || v == "ingress"):
		via, field = fmt.Sprintf("annotation %s: %s on the pod template", linkerdInject, v), metaField("annotations", linkerdInject)
	case set:
	case ns.annotations[linkerdInject] == "enabled" || ns.annotations[linkerdInject] == "ingress":
		via, field = fmt.Sprintf("annotation %s: %s on Namespace %q", linkerdInject, ns.annotations[linkerdInject], namespaceName(o)), "metadata.namespace"
	}
	linkerdNative := truthy(annotations[linkerdNativeBeta]) || truthy(annotations[linkerdNativeAlpha]) ||
		(annotations[linkerdNativeBeta] == "" && annotations[linkerdNativeAlpha] == "" &&
			(truthy(ns.annotations[linkerdNativeBeta]) || truthy(ns.annotations[linkerdNativeAlpha])))
	if via != "" && !(linkerdNative && native129) {
		fix := fmt.Sprintf("set annotation %s: \"true\" on the pod template (Linkerd 2.15+, Kubernetes 1.29+) so the proxy is a native sidecar that stops after the job's containers", linkerdNativeBeta)
		if !native129 {
			fix = fmt.Sprintf("native sidecars need Kubernetes 1.29 (target is %s): until then, end the job's command with linkerd-await --shutdown or a POST to localhost:4191/shutdown", kube)
		}
		out = append(out, injection{mesh: "linkerd", severity: rules.Error, field: field, message: fmt.Sprintf(
			"%s injects Linkerd's proxy into this %s as a classic container, and it never exits: the pod never completes and the Job never finishes; %s (not needed if Linkerd is installed with proxy.nativeSidecar=true, or the command already stops the proxy)",
			via, what, fix)})
	}

	// Istio.
	via, field = "", ""
	podInject, podSet := labels[istioInject]
	if !podSet {
		podInject, podSet = annotations[istioInject]
	}
	switch {
	case podSet && podInject == "true":
		via, field = fmt.Sprintf("%s: \"true\" on the pod template", istioInject), metaField("labels", istioInject)
		if _, isLabel := labels[istioInject]; !isLabel {
			field = metaField("annotations", istioInject)
		}
	case podSet:
	case ns.labels[istioNamespaceLabel] == "enabled":
		via, field = fmt.Sprintf("label %s=enabled on Namespace %q", istioNamespaceLabel, namespaceName(o)), "metadata.namespace"
	case ns.labels[istioNamespaceLabel] == "" && ns.labels[istioRevLabel] != "":
		via, field = fmt.Sprintf("label %s=%s on Namespace %q", istioRevLabel, ns.labels[istioRevLabel], namespaceName(o)), "metadata.namespace"
	}
	native, nativeSet := annotations[istioNative]
	if via != "" && !(nativeSet && truthy(native) && native129) {
		sev := rules.Warning
		why := "unless Istio injects it as a native sidecar (the default from Istio 1.27 where the cluster supports native sidecars; earlier Istio, or ENABLE_NATIVE_SIDECARS=false, injects a classic container)"
		fix := fmt.Sprintf("set annotation %s: \"true\" on the pod template so the proxy is a native sidecar whatever the mesh's default", istioNative)
		switch {
		case !native129:
			sev = rules.Error
			why = fmt.Sprintf("native sidecars need Kubernetes 1.29 (target is %s), so Istio injects a classic container", kube)
			fix = "end the job's command with a POST to localhost:15020/quitquitquit"
		case nativeSet && !truthy(native):
			sev = rules.Error
			why = fmt.Sprintf("annotation %s: %q asks for a classic container", istioNative, native)
		}
		out = append(out, injection{mesh: "istio", severity: sev, field: field, message: fmt.Sprintf(
			"%s injects Istio's proxy into this %s, %s; a classic proxy never exits, so the pod never completes; %s (not needed if the command already stops the proxy)",
			via, what, why, fix)})
	}
	return out
}

func namespaceName(o *manifest.Object) string {
	if o.Namespace == "" {
		return "default"
	}
	return o.Namespace
}

func truthy(s string) bool { return strings.EqualFold(strings.TrimSpace(s), "true") }

// stopsProxy reports whether a container's command already stops the
// mesh's proxy when the work is done (linkerd-await --shutdown, Linkerd's
// /shutdown or Istio's /quitquitquit admin endpoint).
func stopsProxy(cs []podutil.Container, mesh string) bool {
	for _, c := range cs {
		var words []string
		for _, k := range []string{"command", "args"} {
			for _, el := range podutil.List(c.M, k) {
				if s, ok := el.(string); ok {
					words = append(words, s)
				}
			}
		}
		line := strings.Join(words, " ")
		switch mesh {
		case "linkerd":
			if (strings.Contains(line, "linkerd-await") && strings.Contains(line, "--shutdown")) || strings.Contains(line, "4191/shutdown") {
				return true
			}
		case "istio":
			if strings.Contains(line, "quitquitquit") {
				return true
			}
		}
	}
	return false
}
