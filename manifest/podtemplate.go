package manifest

import (
	"strconv"

	"sigs.k8s.io/kustomize/kyaml/yaml"
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
	if o.Kind == "JobSet" && o.Group() == JobSetGroup {
		rjobs := o.Lookup("spec.replicatedJobs")
		if rjobs == nil || rjobs.Kind != yaml.SequenceNode {
			return nil
		}
		var out []PodTemplate
		for i, rj := range rjobs.Content {
			p := "spec.replicatedJobs[" + strconv.Itoa(i) + "].template.spec.template"
			if o.Lookup(p) == nil {
				continue
			}
			out = append(out, PodTemplate{Path: p, Name: scalarValue(lookup(rj, "name"))})
		}
		return out
	}
	p, ok := podTemplatePaths[[2]string{o.Group(), o.Kind}]
	if !ok {
		return nil
	}
	if p != "" && o.Lookup(p) == nil {
		return nil
	}
	return []PodTemplate{{Path: p}}
}
