package discover

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/kilnhq/kiln/internal/yamlnode"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// patchShape says why the file at path is a kustomize patch rather than
// objects of their own ("" when it is not one, or cannot be read: the
// reader then reports it): a JSON 6902 patch (a list of operations), a
// strategic merge directive ($patch and its kin), or a partial object, one
// without what every object of its kind must have, which the API server
// refuses to create and kustomize merges into the object it patches.
func patchShape(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var doc yaml.Node
		if dec.Decode(&doc) != nil {
			return "" // the end, or what the reader reports
		}
		if len(doc.Content) == 0 {
			continue
		}
		if why := documentPatchShape(doc.Content[0]); why != "" {
			return why
		}
	}
}

// documentPatchShape is patchShape for one document.
func documentPatchShape(root *yaml.Node) string {
	switch root.Kind {
	case yaml.SequenceNode:
		if len(root.Content) > 0 && yamlnode.Value(root.Content[0], "op") != nil && yamlnode.Value(root.Content[0], "path") != nil {
			return "a JSON 6902 patch (a list of op and path operations)"
		}
		return ""
	case yaml.MappingNode:
	default:
		return ""
	}
	if d := directive(root); d != "" {
		return "carries the strategic merge directive " + d
	}
	kind, group := scalarAt(root, "kind"), apiGroup(scalarAt(root, "apiVersion"))
	if kind == "" || scalarAt(root, "apiVersion") == "" {
		return ""
	}
	if items := yamlnode.Value(root, "items"); strings.HasSuffix(kind, "List") && items != nil && items.Kind == yaml.SequenceNode {
		for _, it := range items.Content {
			if it.Kind == yaml.MappingNode {
				if why := documentPatchShape(it); why != "" {
					return why
				}
			}
		}
		return ""
	}
	if missing := missingRequired(group, kind, root); missing != "" {
		return kind + " " + missing
	}
	return ""
}

// directive returns the first strategic merge patch directive key in the
// tree ($patch, $setElementOrder/…, $deleteFromPrimitiveList/…,
// $retainKeys), which only a patch carries: the API server refuses them as
// unknown fields.
func directive(n *yaml.Node) string {
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i].Value
			if k == "$patch" || k == "$retainKeys" || strings.HasPrefix(k, "$setElementOrder/") || strings.HasPrefix(k, "$deleteFromPrimitiveList/") {
				if k == "$patch" {
					return "$patch: " + n.Content[i+1].Value
				}
				return k
			}
		}
	}
	for _, c := range n.Content {
		if d := directive(c); d != "" {
			return d
		}
	}
	return ""
}

func apiGroup(apiVersion string) string {
	if g, _, ok := strings.Cut(apiVersion, "/"); ok {
		return g
	}
	return ""
}

// podSpecAt is where each workload kind holds its pod spec.
var podSpecAt = map[string][]string{
	"/Pod":                   {"spec"},
	"/ReplicationController": {"spec", "template", "spec"},
	"/PodTemplate":           {"template", "spec"},
	"apps/Deployment":        {"spec", "template", "spec"},
	"apps/StatefulSet":       {"spec", "template", "spec"},
	"apps/DaemonSet":         {"spec", "template", "spec"},
	"apps/ReplicaSet":        {"spec", "template", "spec"},
	"batch/Job":              {"spec", "template", "spec"},
	"batch/CronJob":          {"spec", "jobTemplate", "spec", "template", "spec"},
}

// missingRequired says what an object of a built-in kind lacks that every
// object of its kind must have ("" for none, or a kind it does not know):
// an apps workload's selector, a pod spec's containers and each
// container's image, a CRD's group and names.
func missingRequired(group, kind string, root *yaml.Node) string {
	if group == "apiextensions.k8s.io" && kind == "CustomResourceDefinition" {
		spec := yamlnode.Value(root, "spec")
		for _, f := range []string{"names", "group"} {
			if yamlnode.Value(spec, f) == nil {
				return "without spec." + f
			}
		}
		return ""
	}
	path, ok := podSpecAt[group+"/"+kind]
	if !ok {
		return ""
	}
	if group == "apps" && yamlnode.Value(yamlnode.Value(root, "spec"), "selector") == nil {
		return "without spec.selector"
	}
	spec := root
	for _, k := range path {
		spec = yamlnode.Value(spec, k)
	}
	containers := yamlnode.Value(spec, "containers")
	if containers == nil || containers.Kind != yaml.SequenceNode || len(containers.Content) == 0 {
		return "without " + strings.Join(path, ".") + ".containers"
	}
	for _, list := range []string{"initContainers", "containers"} {
		l := yamlnode.Value(spec, list)
		if l == nil || l.Kind != yaml.SequenceNode {
			continue
		}
		for _, c := range l.Content {
			if yamlnode.Value(c, "image") == nil {
				return fmt.Sprintf("with container %q without an image", scalarAt(c, "name"))
			}
		}
	}
	return ""
}

// metadataOnly returns the objects a file names when each of its documents
// holds only apiVersion, kind and metadata (with a name), as a strategic
// merge patch that sets labels or annotations does; nil otherwise (or when
// the file cannot be read: the reader then reports it). Keys are
// objectKey's.
func metadataOnly(path string) []string {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var keys []string
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var doc yaml.Node
		if err := dec.Decode(&doc); err != nil {
			if err == io.EOF {
				return keys
			}
			return nil
		}
		if len(doc.Content) == 0 {
			continue
		}
		root := doc.Content[0]
		if root.Kind != yaml.MappingNode {
			return nil
		}
		for i := 0; i+1 < len(root.Content); i += 2 {
			switch root.Content[i].Value {
			case "apiVersion", "kind", "metadata":
			default:
				return nil
			}
		}
		kind, name := scalarAt(root, "kind"), scalarAt(yamlnode.Value(root, "metadata"), "name")
		if kind == "" || name == "" || scalarAt(root, "apiVersion") == "" {
			return nil
		}
		keys = append(keys, objectKey(apiGroup(scalarAt(root, "apiVersion")), kind, name))
	}
}

// objectKey names an object across versions: group, kind and name.
func objectKey(group, kind, name string) string {
	return group + "/" + kind + "/" + name
}
