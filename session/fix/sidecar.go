package fix

import (
	"fmt"
	"sort"

	"github.com/kilnhq/kiln/internal/yamlnode"
	"github.com/kilnhq/kiln/manifest"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// moveToNativeSidecars moves the regular containers at the given indexes of
// a pod spec to initContainers with restartPolicy: Always.
//
// Where they go: after the leading init containers that are already native
// sidecars or run the same image repository as the helper (a mesh's own init
// step, e.g. istio-init, must run before its proxy), before every other init
// container, since those may need the helper (a database proxy for a
// migration). At least one regular container always stays.
func moveToNativeSidecars(spec *yaml.Node, indexes []int) []string {
	containers := yamlnode.Value(spec, "containers")
	if containers == nil || containers.Kind != yaml.SequenceNode {
		return nil
	}
	idx := uniqueSorted(indexes)
	var moved []*yaml.Node
	for _, i := range idx {
		if i < 0 || i >= len(containers.Content) || containers.Content[i].Kind != yaml.MappingNode {
			return nil
		}
		moved = append(moved, containers.Content[i])
	}
	if len(moved) == 0 || len(moved) >= len(containers.Content) {
		return nil
	}
	init := yamlnode.Value(spec, "initContainers")
	if !isNull(init) && init.Kind != yaml.SequenceNode {
		return nil
	}
	for k := len(idx) - 1; k >= 0; k-- {
		i := idx[k]
		containers.Content = append(containers.Content[:i:i], containers.Content[i+1:]...)
	}
	if isNull(init) {
		init = &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		insertBefore(spec, "initContainers", init, "containers")
	}
	var notes []string
	for _, c := range moved {
		setScalar(c, "restartPolicy", str("Always"))
		at := insertionPoint(init.Content, manifest.ImageRepository(yamlnode.Scalar(yamlnode.Value(c, "image"))))
		init.Content = append(init.Content[:at:at], append([]*yaml.Node{c}, init.Content[at:]...)...)
		notes = append(notes, fmt.Sprintf("container %q: moved to initContainers[%d] with restartPolicy: Always (native sidecar)", yamlnode.Scalar(yamlnode.Value(c, "name")), at))
	}
	return notes
}

// insertionPoint returns where a helper with image repository repo goes in initContainers.
func insertionPoint(inits []*yaml.Node, repo string) int {
	for i, c := range inits {
		native := yamlnode.Scalar(yamlnode.Value(c, "restartPolicy")) == "Always"
		same := repo != "" && manifest.ImageRepository(yamlnode.Scalar(yamlnode.Value(c, "image"))) == repo
		if !native && !same {
			return i
		}
	}
	return len(inits)
}

// insertBefore adds key: v to mapping m just before the key named before (or at the end).
func insertBefore(m *yaml.Node, key string, v *yaml.Node, before string) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == before {
			m.Content = append(m.Content[:i:i], append([]*yaml.Node{str(key), v}, m.Content[i:]...)...)
			return
		}
	}
	set(m, key, v)
}

func uniqueSorted(xs []int) []int {
	out := append([]int(nil), xs...)
	sort.Ints(out)
	j := 0
	for i, x := range out {
		if i == 0 || x != out[j-1] {
			out[j] = x
			j++
		}
	}
	return out[:j]
}
