package manifest

import (
	"strconv"
	"strings"
)

// PodTemplate is one pod template inside a workload object.
type PodTemplate struct {
	// Path is the field path of the template (metadata + spec) in the object:
	// "" for a Pod, "template" for a PodTemplate, "spec.template" for a
	// Deployment, "spec.replicatedJobs[2].template.spec.template" for a JobSet.
	Path string
	// Name names the template for messages: "" for single-template kinds, the
	// replicated job's name for a JobSet.
	Name string
}

// MetadataPath is the field path of the template's metadata.
func (t PodTemplate) MetadataPath() string { return join(t.Path, "metadata") }

// SpecPath is the field path of the template's pod spec.
func (t PodTemplate) SpecPath() string { return join(t.Path, "spec") }

func join(a, b string) string {
	if a == "" {
		return b
	}
	return a + "." + b
}

// podTemplatePaths maps workload kinds (by group and kind) to where their single pod template lives.
var podTemplatePaths = map[[2]string]string{
	{"", "Pod"}:                   "",
	{"", "PodTemplate"}:           "template",
	{"", "ReplicationController"}: "spec.template",
	{"apps", "Deployment"}:        "spec.template",
	{"apps", "ReplicaSet"}:        "spec.template",
	{"apps", "StatefulSet"}:       "spec.template",
	{"apps", "DaemonSet"}:         "spec.template",
	{"batch", "Job"}:              "spec.template",
	{"batch", "CronJob"}:          "spec.jobTemplate.spec.template",
	// Older groups that served the same kinds.
	{"extensions", "Deployment"}: "spec.template",
	{"extensions", "ReplicaSet"}: "spec.template",
	{"extensions", "DaemonSet"}:  "spec.template",
}

// ImageRepository returns an image reference without its tag and digest,
// lower-cased: "docker.io/envoyproxy/envoy:v1.31@sha256:…" →
// "docker.io/envoyproxy/envoy".
func ImageRepository(image string) string {
	image = strings.ToLower(strings.TrimSpace(image))
	if i := strings.IndexByte(image, '@'); i >= 0 {
		image = image[:i]
	}
	if i := strings.LastIndexByte(image, ':'); i > strings.LastIndexByte(image, '/') {
		image = image[:i]
	}
	return image
}

// JobSetGroup is the API group of JobSet.
const JobSetGroup = "jobset.x-k8s.io"

// IsWorkload reports whether the object kind carries pod templates.
func IsWorkload(o *Object) bool {
	if o.Kind == "JobSet" && o.Group() == JobSetGroup {
		return true
	}
	_, ok := podTemplatePaths[[2]string{o.Group(), o.Kind}]
	return ok
}

// PodTemplatesOf returns the pod templates of a workload object that are
// present in it (none for other kinds). For a JobSet, one per replicated job.
func PodTemplatesOf(o *Object) []PodTemplate {
	content, err := o.Content()
	if err != nil {
		return nil
	}
	if o.Kind == "JobSet" && o.Group() == JobSetGroup {
		rjobs, _ := ValueAt(content, "spec.replicatedJobs").([]any)
		var out []PodTemplate
		for i, rj := range rjobs {
			p := "spec.replicatedJobs[" + strconv.Itoa(i) + "].template.spec.template"
			if _, ok := ValueAt(content, p).(map[string]any); !ok {
				continue
			}
			name, _ := ValueAt(rj, "name").(string)
			out = append(out, PodTemplate{Path: p, Name: name})
		}
		return out
	}
	p, ok := podTemplatePaths[[2]string{o.Group(), o.Kind}]
	if !ok {
		return nil
	}
	if p != "" {
		if _, ok := ValueAt(content, p).(map[string]any); !ok {
			return nil
		}
	}
	return []PodTemplate{{Path: p}}
}

// ValueAt returns the value at a field path (see SplitPath) in decoded
// content (Object.Content), or nil when the path does not exist.
func ValueAt(v any, path string) any {
	for _, seg := range SplitPath(path) {
		switch x := v.(type) {
		case map[string]any:
			v = x[seg]
		case []any:
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	return v
}
