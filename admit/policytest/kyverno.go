package policytest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules/cel"
	"k8s.io/apiserver/pkg/admission"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Kyverno's test format (kyverno test, cli.kyverno.io/v1alpha1 Test and the
// older kyverno.io/v1 one), read unchanged. kiln runs its results for
// ValidatingAdmissionPolicies (isValidatingAdmissionPolicy) and
// MutatingAdmissionPolicies (isMutatingAdmissionPolicy, patchedResources)
// as the API server would judge each resource in a CREATE request; results
// for Kyverno's own policies are listed as not run.

var kyvernoKeys = []string{"apiVersion", "kind", "metadata", "name", "policies", "resources", "jsonPayload", "jsonPayloads",
	"targetResources", "variables", "paramResources", "userinfo", "results", "checks", "values", "exceptions", "context", "clusterResources"}

var kyvernoResultKeys = []string{"policy", "rule", "isValidatingAdmissionPolicy", "isMutatingAdmissionPolicy", "isValidatingPolicy",
	"isDeletingPolicy", "isImageValidatingPolicy", "isGeneratingPolicy", "isMutatingPolicy", "result", "status", "kind",
	"patchedResources", "patchedResource", "generatedResource", "cloneSourceResource", "resource", "resources", "resourceSpecs", "namespace"}

// kyvernoKind reports whether a file's top level says kind: Test.
func kyvernoKind(data []byte) bool {
	for _, line := range bytes.Split(data, []byte("\n")) {
		if bytes.Equal(bytes.TrimSpace(line), []byte("kind: Test")) && !bytes.HasPrefix(line, []byte(" ")) {
			return true
		}
	}
	return false
}

// readKyverno reads a Kyverno test file: its header, the objects it names,
// the request's user and its values, then a case per resource of each
// result.
func readKyverno(file string, data []byte) (*Suite, error) {
	r := &reader{file: file}
	root, err := r.document(data)
	if err != nil {
		return nil, err
	}
	f, err := r.fields(root, "a Kyverno test", kyvernoKeys...)
	if err != nil {
		return nil, err
	}
	s, err := kyvernoHeader(r, file, f)
	if err != nil {
		return nil, err
	}
	l := &loader{r: r, dir: filepath.Dir(file)}
	resources, err := l.kyvernoObjects(s, f, root)
	if err != nil {
		return nil, err
	}
	var user string
	var groups []string
	if n := f["userinfo"]; n != nil {
		if user, groups, err = l.userInfo(n); err != nil {
			return nil, err
		}
	}
	if err := l.kyvernoValuesOf(s, f); err != nil {
		return nil, err
	}
	results := f["results"]
	if results == nil || results.Kind != yaml.SequenceNode {
		return nil, r.errorf(orNode(results, root), "results must be a list of expected results")
	}
	for i, rn := range results.Content {
		cases, note, err := l.kyvernoResult(rn, i, s.Policies, resources)
		if err != nil {
			return nil, err
		}
		if note != "" {
			s.Notes = append(s.Notes, note)
		}
		for _, c := range cases {
			c.Request.User, c.Request.Groups = user, groups
		}
		s.Cases = append(s.Cases, cases...)
	}
	return s, nil
}

// kyvernoHeader checks a Kyverno test's apiVersion and kind and returns its
// suite, named by name, metadata.name or the file's directory.
func kyvernoHeader(r *reader, file string, f map[string]*yaml.Node) (*Suite, error) {
	if n := f["apiVersion"]; n != nil {
		if v, _ := r.str(n, "apiVersion"); v != "cli.kyverno.io/v1alpha1" && v != "kyverno.io/v1" {
			return nil, r.errorf(n, "apiVersion %q: a Kyverno test is cli.kyverno.io/v1alpha1 (or kyverno.io/v1)", v)
		}
		if k, _ := r.str(f["kind"], "kind"); k != "Test" {
			return nil, r.errorf(orNode(f["kind"], n), "kind must be Test")
		}
	}
	s := &Suite{File: file, Format: "kyverno", Name: filepath.Base(filepath.Dir(file)), KubeVersion: manifest.LatestKube}
	var err error
	if n := f["name"]; n != nil {
		if s.Name, err = r.str(n, "name"); err != nil {
			return nil, err
		}
	}
	if md := f["metadata"]; md != nil {
		m, err := r.fields(md, "metadata", "name", "namespace", "labels", "annotations")
		if err != nil {
			return nil, err
		}
		if name, _ := r.str(m["name"], "metadata.name"); name != "" {
			s.Name = name
		}
	}
	return s, nil
}

// kyvernoObjects reads the policies (binding the unbound ones), the params
// and cluster resources of a Kyverno test into s, notes the keys for
// Kyverno's own policies, and returns the resources its results name.
func (l *loader) kyvernoObjects(s *Suite, f map[string]*yaml.Node, root *yaml.Node) ([]*manifest.Object, error) {
	var err error
	if s.Policies, err = l.files(f["policies"], "policies"); err != nil {
		return nil, err
	}
	bindings, note, err := bindUnbound(s.Policies)
	if err != nil {
		return nil, err
	}
	s.Policies = append(s.Policies, bindings...)
	s.bound = map[*manifest.Object]bool{}
	for _, b := range bindings {
		s.bound[b] = true
	}
	if note != "" {
		s.Notes = append(s.Notes, note)
	}
	resources, err := l.files(f["resources"], "resources")
	if err != nil {
		return nil, err
	}
	for _, key := range []string{"paramResources", "clusterResources"} {
		objs, err := l.files(f[key], key)
		if err != nil {
			return nil, err
		}
		s.Cluster = append(s.Cluster, objs...)
	}
	for _, key := range []string{"jsonPayload", "jsonPayloads", "targetResources", "checks", "exceptions", "context"} {
		if f[key] != nil {
			s.Notes = append(s.Notes, fmt.Sprintf("%s: %s is for Kyverno's own policies; kiln does not read it", l.r.at(keyNode(root, key)), key))
		}
	}
	return resources, nil
}

// kyvernoValuesOf reads the Namespaces of a Kyverno test's variables file
// and values into s's cluster, with their notes.
func (l *loader) kyvernoValuesOf(s *Suite, f map[string]*yaml.Node) error {
	for _, key := range []string{"variables", "values"} {
		n := f[key]
		if n == nil {
			continue
		}
		vr, vn := l.r, n
		if key == "variables" {
			var err error
			if vr, vn, err = l.valuesFile(n); err != nil {
				return err
			}
		}
		ns, notes, err := kyvernoValues(vr, vn)
		if err != nil {
			return err
		}
		s.Cluster = append(s.Cluster, ns...)
		s.Notes = append(s.Notes, notes...)
	}
	return nil
}

// userInfo reads a Kyverno UserInfo file: userInfo.username and groups.
func (l *loader) userInfo(n *yaml.Node) (string, []string, error) {
	r, root, err := l.valuesFile(n)
	if err != nil {
		return "", nil, err
	}
	f, err := r.fields(root, "a Kyverno UserInfo", "apiVersion", "kind", "metadata", "roles", "clusterRoles", "userInfo")
	if err != nil {
		return "", nil, err
	}
	ui := f["userInfo"]
	if ui == nil {
		return "", nil, r.errorf(root, "a Kyverno UserInfo needs userInfo (username, groups)")
	}
	u, err := r.fields(ui, "userInfo", "username", "uid", "groups", "extra")
	if err != nil {
		return "", nil, err
	}
	user, err := r.str(u["username"], "userInfo.username")
	if err != nil {
		return "", nil, err
	}
	groups, err := r.strings(u["groups"], "userInfo.groups")
	if err != nil {
		return "", nil, err
	}
	if user == "" {
		user = "kiln:offline"
	}
	return user, groups, nil
}

// valuesFile reads the YAML file named at n, relative to the test file.
func (l *loader) valuesFile(n *yaml.Node) (*reader, *yaml.Node, error) {
	name, err := l.r.str(n, "file name")
	if err != nil {
		return nil, nil, err
	}
	path := filepath.Join(l.dir, name)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, l.r.errorf(n, "cannot read %s: %v", name, manifest.PathErr(err))
	}
	r := &reader{file: path}
	root, err := r.document(data)
	return r, root, err
}

// kyvernoValues reads the Namespaces of Kyverno values (namespaces,
// namespaceSelector); the rest is for Kyverno's own policies.
func kyvernoValues(r *reader, n *yaml.Node) ([]*manifest.Object, []string, error) {
	f, err := r.fields(n, "values", "apiVersion", "kind", "metadata", "globalValues", "policies", "namespaceSelector", "namespaces", "subresources", "variables")
	if err != nil {
		return nil, nil, err
	}
	var out []*manifest.Object
	var notes []string
	for _, key := range []string{"globalValues", "policies", "subresources", "variables"} {
		if f[key] != nil {
			notes = append(notes, fmt.Sprintf("%s: values.%s are for Kyverno's own policies; an admission policy's CEL computes its variables itself, so kiln does not read them", r.at(keyNode(n, key)), key))
		}
	}
	if ns := f["namespaces"]; ns != nil {
		if ns.Kind != yaml.SequenceNode {
			return nil, nil, r.errorf(ns, "namespaces must be a list of Namespace objects")
		}
		for _, item := range ns.Content {
			if item.Kind == yaml.MappingNode && yamlValue(item, "apiVersion") == nil {
				item.Content = append([]*yaml.Node{
					{Kind: yaml.ScalarNode, Value: "apiVersion", Line: item.Line, Column: item.Column}, {Kind: yaml.ScalarNode, Value: "v1", Line: item.Line, Column: item.Column},
					{Kind: yaml.ScalarNode, Value: "kind", Line: item.Line, Column: item.Column}, {Kind: yaml.ScalarNode, Value: "Namespace", Line: item.Line, Column: item.Column},
				}, item.Content...)
			}
			o, err := manifest.NewObject(r.file, 0, -1, item)
			if err != nil {
				return nil, nil, err
			}
			out = append(out, o)
		}
	}
	if sel := f["namespaceSelector"]; sel != nil {
		if sel.Kind != yaml.SequenceNode {
			return nil, nil, r.errorf(sel, "namespaceSelector must be a list of {name, labels}")
		}
		for _, item := range sel.Content {
			m, err := r.fields(item, "a namespaceSelector entry", "name", "labels")
			if err != nil {
				return nil, nil, err
			}
			name, err := r.str(m["name"], "name")
			if err != nil {
				return nil, nil, err
			}
			labels, err := r.stringMap(m["labels"], "labels")
			if err != nil {
				return nil, nil, err
			}
			var b strings.Builder
			fmt.Fprintf(&b, "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: %q\n  labels:\n", name)
			for k, v := range labels {
				fmt.Fprintf(&b, "    %q: %q\n", k, v)
			}
			if len(labels) == 0 {
				b.WriteString("    {}\n")
			}
			objs, errs := manifest.Parse(r.file, []byte(b.String()))
			if len(errs) > 0 {
				return nil, nil, r.errorf(item, "namespaceSelector: %v", errs[0])
			}
			out = append(out, objs...)
		}
	}
	return out, notes, nil
}

func yamlValue(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// kyvernoResult turns one expected result into a case per resource.
func (l *loader) kyvernoResult(n *yaml.Node, index int, policyObjs, resources []*manifest.Object) ([]*Case, string, error) {
	r := l.r
	f, err := r.fields(n, "a result", kyvernoResultKeys...)
	if err != nil {
		return nil, "", err
	}
	policy, err := r.str(f["policy"], "policy")
	if err != nil {
		return nil, "", err
	}
	isVAP, err := r.boolean(f["isValidatingAdmissionPolicy"], "isValidatingAdmissionPolicy")
	if err != nil {
		return nil, "", err
	}
	isMAP, err := r.boolean(f["isMutatingAdmissionPolicy"], "isMutatingAdmissionPolicy")
	if err != nil {
		return nil, "", err
	}
	if !isVAP && !isMAP {
		return nil, fmt.Sprintf("%s: result %d (policy %s) is for one of Kyverno's own policies: not run, kiln evaluates admission policies (isValidatingAdmissionPolicy, isMutatingAdmissionPolicy)", r.at(n), index+1, policy), nil
	}
	resultNode := f["result"]
	if resultNode == nil {
		resultNode = f["status"]
	}
	want, err := r.oneOf(resultNode, "result", "pass", "fail", "skip", "warn", "error")
	if err != nil {
		return nil, "", err
	}
	if want == "" {
		return nil, "", r.errorf(n, "a result needs result: pass, fail, skip, warn or error")
	}
	t, err := resultTargets(r, n, f, resources)
	if err != nil {
		return nil, "", err
	}
	patched, err := l.patched(f)
	if err != nil {
		return nil, "", err
	}
	outcome, note := kyvernoOutcome(want, policy, isMAP, policyObjs)
	var cases []*Case
	for i, name := range t.names {
		at := n
		if rs := f["resources"]; rs != nil && i < len(rs.Content) {
			at = rs.Content[i]
		} else if j := i - (len(t.names) - len(t.specNodes)); j >= 0 && j < len(t.specNodes) {
			at = t.specNodes[j]
		}
		o, err := findResource(r, at, t.kinds[i], t.ns, name, resources)
		if err != nil {
			return nil, "", err
		}
		c := &Case{Name: fmt.Sprintf("%s %s %s/%s", policy, want, t.kinds[i], name), Pos: r.at(at), Note: note,
			Request: requestFor(o), Expect: Expect{Outcome: outcome, Only: policy}}
		if isMAP && len(patched) > 0 {
			if c.Expect.Admitted = patchedFor(o, patched); c.Expect.Admitted == nil {
				return nil, "", r.errorf(orNode(f["patchedResources"], f["patchedResource"]), "patchedResources holds no %s %s", t.kinds[i], name)
			}
		}
		cases = append(cases, c)
	}
	if len(cases) == 0 {
		return nil, "", r.errorf(n, "a result needs kind or resources (the names of the resources it applies to)")
	}
	return cases, "", nil
}

// targets are the resources a Kyverno result applies to: names
// ("namespace/name" or "name") with their kinds, the resourceSpecs entries
// that named the last of them, and the result's namespace.
type targets struct {
	names, kinds []string
	specNodes    []*yaml.Node
	ns           string
}

// resultTargets reads the resources a result names (resources, resource,
// resourceSpecs); a result that names none applies to every resource of
// its kind (Kyverno's reading).
func resultTargets(r *reader, n *yaml.Node, f map[string]*yaml.Node, resources []*manifest.Object) (targets, error) {
	var t targets
	kind, err := r.str(f["kind"], "kind")
	if err != nil {
		return t, err
	}
	if t.names, err = r.strings(f["resources"], "resources"); err != nil {
		return t, err
	}
	if one, _ := r.str(f["resource"], "resource"); one != "" {
		t.names = append(t.names, one)
	}
	t.kinds = make([]string, len(t.names))
	for i := range t.kinds {
		t.kinds[i] = kind
	}
	if rs := f["resourceSpecs"]; rs != nil {
		if rs.Kind != yaml.SequenceNode {
			return t, r.errorf(rs, "resourceSpecs must be a list of {group, version, kind, namespace, name}")
		}
		for _, sn := range rs.Content {
			m, err := r.fields(sn, "a resourceSpecs entry", "group", "version", "kind", "namespace", "subresource", "name")
			if err != nil {
				return t, err
			}
			name, _ := r.str(m["name"], "name")
			k, _ := r.str(m["kind"], "kind")
			if k == "" {
				k = kind
			}
			t.kinds = append(t.kinds, k)
			if n, _ := r.str(m["namespace"], "namespace"); n != "" {
				name = n + "/" + name
			}
			t.names = append(t.names, name)
			t.specNodes = append(t.specNodes, sn)
		}
	}
	t.ns, _ = r.str(f["namespace"], "namespace")
	if len(t.names) == 0 && kind != "" {
		for _, o := range resources {
			if (o.Kind == kind || strings.HasSuffix(kind, "/"+o.Kind)) && (t.ns == "" || o.Namespace == t.ns || (o.Namespace == "" && t.ns == "default")) {
				name := o.Name
				if o.Namespace != "" {
					name = o.Namespace + "/" + name
				}
				t.names, t.kinds = append(t.names, name), append(t.kinds, kind)
			}
		}
		if len(t.names) == 0 {
			return t, r.errorf(orNode(f["kind"], n), "the result names no resources and the test's resources hold no %s", kind)
		}
	}
	return t, nil
}

// patched reads a result's patchedResources (or patchedResource) file.
func (l *loader) patched(f map[string]*yaml.Node) ([]*manifest.Object, error) {
	var patched []*manifest.Object
	for _, key := range []string{"patchedResources", "patchedResource"} {
		if pn := f[key]; pn != nil {
			name, err := l.r.str(pn, key)
			if err != nil {
				return nil, err
			}
			objs, err := l.file(pn, name)
			if err != nil {
				return nil, err
			}
			patched = append(patched, objs...)
		}
	}
	return patched, nil
}

// patchedFor is the last patched resource that is o (kind, name and, when
// both have one, namespace); nil when none is.
func patchedFor(o *manifest.Object, patched []*manifest.Object) *manifest.Object {
	var out *manifest.Object
	for _, p := range patched {
		if p.Kind == o.Kind && p.Name == o.Name && (p.Namespace == o.Namespace || p.Namespace == "" || o.Namespace == "") {
			out = p
		}
	}
	return out
}

// bindUnbound binds each admission policy among objs that no binding among
// them names, as Kyverno does: the test file is its binding, and kyverno
// test applies the policy to the test's resources as its matchConstraints
// match them, failing a resource on any failed validation. The binding has
// no matchResources and no paramRef, and validationActions [Deny]; it sits
// at the policy's position. The note says once for the suite that a
// cluster evaluates such a policy only through a binding.
func bindUnbound(objs []*manifest.Object) ([]*manifest.Object, string, error) {
	named := map[string]bool{}
	for _, o := range objs {
		if o.Kind != "ValidatingAdmissionPolicyBinding" && o.Kind != "MutatingAdmissionPolicyBinding" || o.Group() != admissionGroup {
			continue
		}
		c, err := o.Content()
		if err != nil {
			continue
		}
		spec, _ := c["spec"].(map[string]any)
		if name, ok := spec["policyName"].(string); ok {
			named[o.Kind+"/"+name] = true
		}
	}
	var out []*manifest.Object
	var unbound []string
	for _, o := range objs {
		if o.Group() != admissionGroup || (o.Kind != "ValidatingAdmissionPolicy" && o.Kind != "MutatingAdmissionPolicy") || named[o.Kind+"Binding/"+o.Name] {
			continue
		}
		named[o.Kind+"Binding/"+o.Name] = true
		spec := fmt.Sprintf("  policyName: %q\n", o.Name)
		if o.Kind == "ValidatingAdmissionPolicy" {
			spec += "  validationActions: [Deny]\n"
		}
		apiVersion := o.APIVersion
		if o.Kind == "ValidatingAdmissionPolicy" {
			apiVersion = admissionGroup + "/v1" // kiln evaluates every version as v1
		}
		text := fmt.Sprintf("apiVersion: %s\nkind: %sBinding\nmetadata:\n  name: %q\nspec:\n%s", apiVersion, o.Kind, "kyverno-test."+o.Name, spec)
		var doc yaml.Node
		if err := yaml.Unmarshal([]byte(text), &doc); err != nil || len(doc.Content) == 0 {
			return nil, "", &FileError{Pos: o.Pos(), Msg: fmt.Sprintf("cannot bind %s %q for the test: %v", o.Kind, o.Name, err)}
		}
		at(doc.Content[0], o.Pos())
		b, err := manifest.NewObject(o.File, o.Doc, o.Item, doc.Content[0])
		if err != nil {
			return nil, "", err
		}
		out = append(out, b)
		unbound = append(unbound, fmt.Sprintf("%s %q (%s)", o.Kind, o.Name, o.Pos()))
	}
	if len(unbound) == 0 {
		return nil, "", nil
	}
	return out, fmt.Sprintf("%s: no binding among the test's policies; kiln binds each to the test's resources, as Kyverno does (a binding with no matchResources or params; validationActions [Deny]), but a cluster evaluates a policy only through a binding: add one to apply it", strings.Join(unbound, ", ")), nil
}

// at places every node of a generated document at pos.
func at(n *yaml.Node, pos manifest.Position) {
	n.Line, n.Column = pos.Line, pos.Column
	for _, c := range n.Content {
		at(c, pos)
	}
}

func requestFor(o *manifest.Object) (req cel.Request) {
	req.Operation = admission.Create
	req.Object = o
	return req
}

// kyvernoOutcome reads Kyverno's expected result as the API server's
// outcome for the policy's bindings, and says where the two differ.
func kyvernoOutcome(want, policy string, isMAP bool, policyObjs []*manifest.Object) (Outcome, string) {
	if isMAP {
		note := ""
		if selectsParams(policy, policyObjs) {
			note = "the binding's paramRef has a selector: Kyverno hands the params it finds to the policy as one list (params.items), the API server runs the policy once per param (params is one object)"
		}
		if want == "fail" || want == "error" {
			return Denied, note
		}
		return Allowed, note
	}
	actions := map[string]bool{}
	for _, o := range policyObjs {
		if o.Kind != "ValidatingAdmissionPolicyBinding" {
			continue
		}
		c, err := o.Content()
		if err != nil {
			continue
		}
		spec, _ := c["spec"].(map[string]any)
		if spec["policyName"] != policy {
			continue
		}
		list, _ := spec["validationActions"].([]any)
		for _, a := range list {
			actions[fmt.Sprint(a)] = true
		}
		if len(list) == 0 {
			actions["Deny"] = true // the server requires them; kiln runs the binding as Kyverno does (fillRequired)
		}
	}
	switch want {
	case "pass":
		return Allowed, ""
	case "skip":
		return Allowed, "Kyverno's skip (the policy does not match): the API server admits, as for pass"
	case "warn":
		return Warned, ""
	}
	// fail or error
	switch {
	case actions["Deny"]:
		if want == "error" {
			return Denied, "Kyverno's error: an evaluation error under failurePolicy Fail, which the API server answers with a denial"
		}
		return Denied, ""
	case actions["Warn"]:
		return Warned, "the binding's validationActions are Warn: the API server admits the request with a warning (Kyverno's fail)"
	default:
		return Allowed, "the binding's validationActions are Audit only: the API server admits the request and records the failure in the audit log (Kyverno's fail)"
	}
}

// selectsParams reports whether a MutatingAdmissionPolicyBinding of the
// policy among objs finds its params by a selector.
func selectsParams(policy string, objs []*manifest.Object) bool {
	for _, o := range objs {
		if o.Kind != "MutatingAdmissionPolicyBinding" {
			continue
		}
		c, err := o.Content()
		if err != nil {
			continue
		}
		spec, _ := c["spec"].(map[string]any)
		ref, _ := spec["paramRef"].(map[string]any)
		if spec["policyName"] == policy && ref["selector"] != nil {
			return true
		}
	}
	return false
}

// findResource looks a result's resource up by kind and name
// (namespace/name, or a namespace given apart).
func findResource(r *reader, at *yaml.Node, kind, ns, name string, resources []*manifest.Object) (*manifest.Object, error) {
	if i := strings.LastIndex(name, "/"); i >= 0 {
		ns, name = name[:i], name[i+1:]
	}
	var found *manifest.Object
	for _, o := range resources {
		if o.Name != name || (kind != "" && o.Kind != kind && !strings.HasSuffix(kind, "/"+o.Kind)) {
			continue
		}
		if ns != "" && o.Namespace != ns && !(o.Namespace == "" && ns == "default") {
			continue
		}
		if found != nil {
			return nil, r.errorf(at, "resource %q names two resources (%s and %s): write namespace/name", name, found.Pos(), o.Pos())
		}
		found = o
	}
	if found == nil {
		return nil, r.errorf(at, "resource %s %q is not among the test's resources", kind, name)
	}
	return found, nil
}
