package policytest

import (
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules/cel"
	"github.com/kilnhq/kiln/rules/policies"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apiserver/pkg/admission"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// kiln's test format (README "kiln test"):
//
//	apiVersion: kiln.dev/v1alpha1
//	kind: PolicyTest
//	metadata: {name: replica-limit}       # optional; default: the file name
//	kubeVersion: "1.37"                   # optional; default: the newest kiln knows
//	policies: [policy.yaml]               # policies and bindings (and anything else in the cluster)
//	builtinPolicies: [kiln-storage-inline-nfs]   # kiln's own, with Deny bindings and their params
//	cluster: [namespaces.yaml]            # objects that exist: Namespaces, params, CRDs
//	resources: [deployments.yaml]         # objects the requests send
//	cases:
//	  - name: too many replicas
//	    operation: UPDATE                 # CREATE (default), UPDATE, DELETE
//	    object: Deployment/shop/web-7     # a resource: name, Kind/name or Kind/namespace/name; or inline
//	    oldObject: web-3                  # UPDATE and DELETE
//	    user: alice
//	    groups: [dev]
//	    dryRun: true
//	    expect:
//	      result: denied                  # allowed, denied, warned
//	      policy: replica-limit
//	      message: replicas must be at most 5
//	      warnings: [...]                 # every warning's message, in order
//	      audit: [...]                    # every Audit failure's message, in order
//	      auditAnnotations: {replica-limit/replicas: "7"}
//	      admittedObject: web-7-patched   # after MutatingAdmissionPolicies

// Names of kiln's test files.
const (
	KilnFileName    = "kiln-test.yaml"
	KilnFileSuffix  = ".kiln-test.yaml"
	KyvernoFileName = "kyverno-test.yaml"
	kilnAPIVersion  = "kiln.dev/v1alpha1"
	kilnKind        = "PolicyTest"
)

var topKeys = []string{"apiVersion", "kind", "metadata", "kubeVersion", "policies", "builtinPolicies", "cluster", "resources", "cases"}

// readKiln decodes a kiln-format test file.
func readKiln(file string, data []byte) (*Suite, error) {
	r := &reader{file: file}
	root, err := r.document(data)
	if err != nil {
		return nil, err
	}
	f, err := r.fields(root, "a test file", topKeys...)
	if err != nil {
		return nil, err
	}
	if v, _ := r.str(f["apiVersion"], "apiVersion"); v != kilnAPIVersion {
		return nil, r.errorf(orNode(f["apiVersion"], root), "apiVersion must be %s", kilnAPIVersion)
	}
	if k, _ := r.str(f["kind"], "kind"); k != kilnKind {
		return nil, r.errorf(orNode(f["kind"], root), "kind must be %s", kilnKind)
	}
	s := &Suite{File: file, Format: "kiln", Name: strings.TrimSuffix(filepath.Base(file), ".yaml"), KubeVersion: manifest.LatestKube}
	if md := f["metadata"]; md != nil {
		m, err := r.fields(md, "metadata", "name")
		if err != nil {
			return nil, err
		}
		if name, err := r.str(m["name"], "metadata.name"); err != nil {
			return nil, err
		} else if name != "" {
			s.Name = name
		}
	}
	if n := f["kubeVersion"]; n != nil {
		v, err := r.str(n, "kubeVersion")
		if err != nil {
			return nil, err
		}
		if s.KubeVersion, err = manifest.ParseKubeVersion(v); err != nil {
			return nil, r.errorf(n, "kubeVersion: %v", err)
		}
	}
	l := &loader{r: r, dir: filepath.Dir(file)}
	if s.Policies, err = l.files(f["policies"], "policies"); err != nil {
		return nil, err
	}
	builtin, err := l.builtin(f["builtinPolicies"], s.KubeVersion)
	if err != nil {
		return nil, err
	}
	s.Builtin = builtin
	if s.Cluster, err = l.files(f["cluster"], "cluster"); err != nil {
		return nil, err
	}
	resources, err := l.files(f["resources"], "resources")
	if err != nil {
		return nil, err
	}
	cases := f["cases"]
	if cases == nil || cases.Kind != yaml.SequenceNode || len(cases.Content) == 0 {
		return nil, r.errorf(orNode(cases, root), "cases must be a non-empty list of requests and their expected outcomes")
	}
	names := map[string]int{}
	for _, cn := range cases.Content {
		c, err := l.kilnCase(cn, resources)
		if err != nil {
			return nil, err
		}
		if line, dup := names[c.Name]; dup {
			return nil, r.errorf(cn, "a second case named %q (first at line %d); give each case its own name", c.Name, line)
		}
		names[c.Name] = cn.Line
		s.Cases = append(s.Cases, c)
	}
	return s, nil
}

func orNode(n, fallback *yaml.Node) *yaml.Node {
	if n != nil {
		return n
	}
	return fallback
}

// loader reads the files a test file names, relative to it.
type loader struct {
	r   *reader
	dir string
}

// files reads every object of the files listed under key.
func (l *loader) files(n *yaml.Node, key string) ([]*manifest.Object, error) {
	if n == nil {
		return nil, nil
	}
	if n.Kind != yaml.SequenceNode {
		return nil, l.r.errorf(n, "%s must be a list of files (relative to the test file)", key)
	}
	var out []*manifest.Object
	for _, e := range n.Content {
		name, err := l.r.str(e, key+" entries")
		if err != nil {
			return nil, err
		}
		objs, err := l.file(e, name)
		if err != nil {
			return nil, err
		}
		out = append(out, objs...)
	}
	return out, nil
}

// file reads the objects of one file named at node n.
func (l *loader) file(n *yaml.Node, name string) ([]*manifest.Object, error) {
	path := name
	if !filepath.IsAbs(path) {
		path = filepath.Join(l.dir, name)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, l.r.errorf(n, "cannot read %s: %v", name, manifest.PathErr(err))
	}
	objs, errs := manifest.Parse(path, data)
	if len(errs) > 0 {
		return nil, errs[0]
	}
	if len(objs) == 0 {
		return nil, l.r.errorf(n, "%s holds no Kubernetes object", name)
	}
	return objs, nil
}

// builtin returns kiln's built-in policies named under n, each with a Deny
// binding and the params ConfigMap (kubeVersion v) as kiln policies export
// writes them.
func (l *loader) builtin(n *yaml.Node, v manifest.KubeVersion) ([]*manifest.Object, error) {
	names, err := l.r.strings(n, "builtinPolicies")
	if err != nil || len(names) == 0 {
		return nil, err
	}
	known := map[string]bool{}
	var all []string
	for _, p := range policies.All() {
		known[p.Name] = true
		all = append(all, p.Name)
	}
	want := map[string]bool{}
	for i, name := range names {
		if !known[name] {
			return nil, l.r.errorf(n.Content[i], "builtinPolicies: kiln has no built-in policy %q (known: %s)", name, strings.Join(all, ", "))
		}
		want[name] = true
	}
	objs, err := policies.Objects(policies.ExportOptions{KubeVersion: v, Actions: []admissionv1.ValidationAction{admissionv1.Deny},
		Keep: func(p *policies.Policy) bool { return want[p.Name] }})
	if err != nil {
		return nil, l.r.errorf(n, "builtinPolicies: %v", err)
	}
	return objs, nil
}

var caseKeys = []string{"name", "operation", "object", "oldObject", "user", "groups", "dryRun", "expect"}
var expectKeys = []string{"result", "policy", "message", "warnings", "audit", "auditAnnotations", "admittedObject"}

// kilnCase decodes one case.
func (l *loader) kilnCase(n *yaml.Node, resources []*manifest.Object) (*Case, error) {
	r := l.r
	f, err := r.fields(n, "a case", caseKeys...)
	if err != nil {
		return nil, err
	}
	c := &Case{Pos: r.at(n)}
	if c.Name, err = r.str(f["name"], "name"); err != nil {
		return nil, err
	}
	if c.Name == "" {
		return nil, r.errorf(n, "a case needs a name")
	}
	op, err := r.oneOf(f["operation"], "operation", "CREATE", "UPDATE", "DELETE")
	if err != nil {
		return nil, err
	}
	if op == "" {
		op = "CREATE"
	}
	c.Request.Operation = admission.Operation(op)
	if c.Request.Object, err = l.objectRef(f["object"], "object", resources); err != nil {
		return nil, err
	}
	if c.Request.OldObject, err = l.objectRef(f["oldObject"], "oldObject", resources); err != nil {
		return nil, err
	}
	switch {
	case op == "CREATE" && c.Request.Object == nil:
		return nil, r.errorf(n, "a CREATE case needs object")
	case op == "CREATE" && c.Request.OldObject != nil:
		return nil, r.errorf(f["oldObject"], "a CREATE request has no oldObject: use operation: UPDATE")
	case op == "UPDATE" && (c.Request.Object == nil || c.Request.OldObject == nil):
		return nil, r.errorf(n, "an UPDATE case needs object and oldObject")
	case op == "DELETE" && c.Request.OldObject == nil:
		return nil, r.errorf(n, "a DELETE case needs oldObject (the object being deleted)")
	case op == "DELETE" && c.Request.Object != nil:
		return nil, r.errorf(f["object"], "a DELETE request has no object (policies see object: null): name the deleted object as oldObject")
	}
	if o, old := c.Request.Object, c.Request.OldObject; o != nil && old != nil && (o.Kind != old.Kind || o.Group() != old.Group() || o.Name != old.Name || o.Namespace != old.Namespace) {
		return nil, r.errorf(f["oldObject"], "oldObject is %s but object is %s: an update changes one object (same kind, namespace and name)", old.Ref(), o.Ref())
	}
	if c.Request.User, err = r.str(f["user"], "user"); err != nil {
		return nil, err
	}
	if c.Request.Groups, err = r.strings(f["groups"], "groups"); err != nil {
		return nil, err
	}
	if len(c.Request.Groups) > 0 && c.Request.User == "" {
		return nil, r.errorf(f["groups"], "groups need a user")
	}
	if c.Request.DryRun, err = r.boolean(f["dryRun"], "dryRun"); err != nil {
		return nil, err
	}
	en := f["expect"]
	if en == nil {
		return nil, r.errorf(n, "a case needs expect (result: allowed, denied or warned)")
	}
	if c.Expect, err = l.expect(en, resources); err != nil {
		return nil, err
	}
	return c, nil
}

func (l *loader) expect(n *yaml.Node, resources []*manifest.Object) (Expect, error) {
	r := l.r
	var e Expect
	f, err := r.fields(n, "expect", expectKeys...)
	if err != nil {
		return e, err
	}
	res, err := r.oneOf(f["result"], "result", string(Allowed), string(Denied), string(Warned))
	if err != nil {
		return e, err
	}
	if res == "" {
		return e, r.errorf(n, "expect needs result: allowed, denied or warned")
	}
	e.Outcome = Outcome(res)
	if e.Policy, err = r.str(f["policy"], "policy"); err != nil {
		return e, err
	}
	if e.Message, err = r.str(f["message"], "message"); err != nil {
		return e, err
	}
	if e.Outcome == Allowed && (f["policy"] != nil || f["message"] != nil) {
		return e, r.errorf(keyNode(n, "result"), "result allowed takes no policy or message (they name the policy that denied or warned)")
	}
	if e.Warnings, err = r.strings(f["warnings"], "warnings"); err != nil {
		return e, err
	}
	if e.Audit, err = r.strings(f["audit"], "audit"); err != nil {
		return e, err
	}
	if e.AuditAnnotations, err = r.stringMap(f["auditAnnotations"], "auditAnnotations"); err != nil {
		return e, err
	}
	for k := range e.AuditAnnotations {
		if !strings.Contains(k, "/") {
			return e, r.errorf(f["auditAnnotations"], "auditAnnotations key %q: the server publishes <policy name>/<key>", k)
		}
	}
	if e.Admitted, err = l.objectRef(f["admittedObject"], "admittedObject", resources); err != nil {
		return e, err
	}
	return e, nil
}

// objectRef resolves a case's object: a reference to a resource (name,
// Kind/name or Kind/namespace/name, optionally after "<file>#" naming the
// resources file) or an inline object.
func (l *loader) objectRef(n *yaml.Node, key string, resources []*manifest.Object) (*manifest.Object, error) {
	if n == nil {
		return nil, nil
	}
	if n.Kind == yaml.MappingNode {
		o, err := manifest.NewObject(l.r.file, 0, -1, n)
		if err != nil {
			return nil, err
		}
		if _, err := o.Content(); err != nil {
			return nil, err
		}
		return o, nil
	}
	ref, err := l.r.str(n, key)
	if err != nil {
		return nil, err
	}
	file, rest, hasFile := strings.Cut(ref, "#")
	if !hasFile {
		rest = ref
	}
	parts := strings.Split(rest, "/")
	var found []*manifest.Object
	for _, o := range resources {
		if hasFile && o.File != filepath.Join(l.dir, file) {
			continue
		}
		ok := false
		switch len(parts) {
		case 1:
			ok = o.Name == parts[0]
		case 2:
			ok = o.Kind == parts[0] && o.Name == parts[1]
		case 3:
			ok = o.Kind == parts[0] && o.Namespace == parts[1] && o.Name == parts[2]
		}
		if ok {
			found = append(found, o)
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		var names []string
		for _, o := range resources {
			names = append(names, refString(o))
		}
		sort.Strings(names)
		if len(names) == 0 {
			return nil, l.r.errorf(n, "%s %q: the test lists no resources; name a file under resources or write the object inline", key, ref)
		}
		return nil, l.r.errorf(n, "%s %q is not among the resources (%s)", key, ref, strings.Join(names, ", "))
	default:
		return nil, l.r.errorf(n, "%s %q names %d resources (%s and %s): write Kind/name, Kind/namespace/name or file#Kind/name", key, ref, len(found), found[0].Pos(), found[1].Pos())
	}
}

// refString names an object as a case refers to it.
func refString(o *manifest.Object) string {
	if o.Namespace != "" {
		return o.Kind + "/" + o.Namespace + "/" + o.Name
	}
	return o.Kind + "/" + o.Name
}

// requestObject names the object of a request for the table.
func requestObject(r cel.Request) string {
	o := r.Object
	if o == nil {
		o = r.OldObject
	}
	if o == nil {
		return ""
	}
	return refString(o)
}
