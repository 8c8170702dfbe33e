package fix

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/kilnhq/kiln/internal/yamlnode"
	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// OnSource returns finding f, reported on objects kustomize rendered
// (several overlays may render one object alike), as a finding on the
// document of src they were rendered from, for Fix to repair there: a
// kustomization's resource file, never a patch. The document is the one
// the rendered objects' positions point at (discover gives a rendered
// object the positions of its origin document). ok is false, with the
// reason, when no document of src is the origin, or when the repair is of
// a container the document does not hold (a patch added it).
func OnSource(f rules.Finding, rendered []*manifest.Object, src *File) (_ rules.Finding, reason string, ok bool) {
	r := rendered[0]
	var doc *manifest.Object
	for _, o := range src.Objects {
		if o.Kind == r.Kind && o.Pos().Line == r.Pos().Line && (o.Name == r.Name || o.Name != "" && strings.Contains(r.Name, o.Name)) {
			doc = o
			break
		}
	}
	if doc == nil {
		return f, "kustomize rendered it from no document of " + src.Path + " that kiln fix can find", false
	}
	out := f
	out.Object = doc.Ref()
	if f.Fix.Action == rules.FixNativeSidecar {
		fx := *f.Fix
		name := ""
		for i, o := range rendered {
			n := containerName(o, fx.Template, fx.Container)
			if i > 0 && n != name {
				return f, fmt.Sprintf("the overlays render containers[%d] differently", fx.Container), false
			}
			name = n
		}
		at := containerIndex(doc, fx.Template, name)
		if name == "" || at < 0 {
			return f, fmt.Sprintf("%s does not hold container %q: a kustomize patch adds it; move it in the patch", src.Path, name), false
		}
		fx.Container = at
		out.Fix = &fx
	}
	return out, "", true
}

// containers returns the containers[] node of o's pod template at path.
func containers(o *manifest.Object, template string) *yaml.Node {
	spec := o.Lookup(manifest.PodTemplate{Path: template}.SpecPath())
	if spec == nil || spec.Kind != yaml.MappingNode {
		return nil
	}
	c := yamlnode.Value(spec, "containers")
	if c == nil || c.Kind != yaml.SequenceNode {
		return nil
	}
	return c
}

// containerName is the name of containers[i] of o's template ("": none).
func containerName(o *manifest.Object, template string, i int) string {
	c := containers(o, template)
	if c == nil || i < 0 || i >= len(c.Content) {
		return ""
	}
	return yamlnode.Scalar(yamlnode.Value(c.Content[i], "name"))
}

// containerIndex is the index of the container named name in o's
// template (-1: none).
func containerIndex(o *manifest.Object, template, name string) int {
	c := containers(o, template)
	if c == nil {
		return -1
	}
	for i, it := range c.Content {
		if it.Kind == yaml.MappingNode && yamlnode.Scalar(yamlnode.Value(it, "name")) == name {
			return i
		}
	}
	return -1
}

// valuesRef matches a reference to a chart value in a template.
var valuesRef = regexp.MustCompile(`\.Values((?:\.[A-Za-z_][A-Za-z0-9_]*)+)`)

// TemplateAdvice says what to change, for a repair of an object rendered
// from a Helm template, which kiln fix does not edit: the chart values the
// template reads for security contexts (for a securityContext repair) or
// on the line the finding points at, else the template line itself.
// template is the template's text.
func TemplateAdvice(f rules.Finding, template []byte) string {
	lines := strings.Split(string(template), "\n")
	var read []string
	switch at := f.Pos.Line - 1; {
	case securityContextFix(f.Fix.Action):
		read = lines
	case at >= 0 && at < len(lines):
		read = lines[at : at+1]
	}
	var refs []string
	seen := map[string]bool{}
	for _, l := range read {
		for _, m := range valuesRef.FindAllStringSubmatch(l, -1) {
			v := strings.TrimPrefix(m[1], ".")
			if securityContextFix(f.Fix.Action) && !strings.Contains(strings.ToLower(v), "securitycontext") || seen[v] {
				continue
			}
			seen[v] = true
			refs = append(refs, ".Values."+v)
		}
	}
	head := fmt.Sprintf("%s: %s: %s: rendered from a Helm template, which kiln fix does not edit (%s): ", f.Pos, f.Rule, f.Object, f.Fix.Describe())
	where := "on this line"
	if securityContextFix(f.Fix.Action) {
		where = "for security contexts"
	}
	if len(refs) == 0 {
		return head + "change the template at this line"
	}
	return head + "set it through the chart values the template reads " + where + ", " + strings.Join(refs, ", ") + " (values.yaml, --values or --set), or change the template at this line"
}

// securityContextFix reports the repairs of a securityContext.
func securityContextFix(a rules.FixAction) bool {
	_, ok := podFixers[a]
	return ok
}
