package admit

import (
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	api "k8s.io/kubernetes/pkg/apis/core"
)

// FilledValue is a value kiln fills in on the API server's behalf: one the
// server takes from outside the request (its clock, a random source, its
// allocators, the cluster's configuration) rather than from its code.
type FilledValue struct {
	// Field is where the value goes.
	Field string
	// Server is what a kube-apiserver puts there on a create.
	Server string
	// Kiln is what kiln puts there.
	Kiln string
	// Invented is set when kiln's value stands in for one the server would
	// choose: no message kiln gives contains it (a message that would
	// names it for what it is instead).
	Invented bool
}

// Filled lists every value kiln fills in on the server's behalf before
// PrepareForCreate and validation, which the policies and kiln's rules then
// see on the admitted object. Everything else on it (defaults, generation,
// a Namespace's phase, a Job's generated selector…) comes from the server's
// own code. The conformance test checks each against a real server
// (admit/conformance/allocated_test.go), and docs/api-server.md's "What the API server would
// do" lists them.
var Filled = []FilledValue{
	{Field: "metadata.uid", Server: "a random UUID", Kiln: "a UUID derived from the file, the document and the object's place in it", Invented: true},
	{Field: "metadata.creationTimestamp", Server: "the time of the request", Kiln: "2026-01-01T00:00:00Z", Invented: true},
	{Field: "metadata.name (from metadata.generateName)", Server: "generateName and 5 random characters", Kiln: "generateName and 5 characters of the server's alphabet derived from the file and the document", Invented: true},
	{Field: "metadata.namespace (of a namespaced object without one)", Server: "the request's namespace (kubectl sends the context's, usually default)", Kiln: "default (Argo CD: the application's namespace)"},
	{Field: "metadata.managedFields", Server: "the field manager's entry (kubectl-client-side-apply, or kubectl for server-side apply)", Kiln: "none: policies reading managedFields see an empty list"},
	{Field: "metadata.resourceVersion", Server: "empty on a dry-run, etcd's revision on a create", Kiln: "empty"},
	{Field: "spec.ipFamilyPolicy, spec.ipFamilies (Service)", Server: "from the request and the cluster's service network (--service-cluster-ip-range)", Kiln: "the same code's answer on the service network of serviceCIDRs (default: single-stack IPv4)"},
	{Field: "spec.clusterIP, spec.clusterIPs (Service)", Server: "a free address of the family's range, at random (a dry-run gives the range's network address)", Kiln: "the range's first address (10.96.0.1 by default); a cluster IP written is checked against the range only when serviceCIDRs is set", Invented: true},
	{Field: "spec.ports[*].nodePort (NodePort and LoadBalancer Service)", Server: "a free port of --service-node-port-range (default 30000-32767), at random (a dry-run gives 32769, 32770, … outside the range, and does not check a requested port against the range)", Kiln: "the range's first ports the Service does not request: 30000, 30001, …; a requested port is checked against the default range, as a create does", Invented: true},
	{Field: "spec.healthCheckNodePort (LoadBalancer Service, externalTrafficPolicy Local)", Server: "a free port of the node port range, at random", Kiln: "the next port after the node ports", Invented: true},
}

// invented is a value kiln filled in where the server would choose one, and
// the words a message uses for it instead.
type invented struct {
	value, says string
	// generatedName is set for a name generated from generateName.
	generatedName bool
}

// allocate fills in what the server allocates for a new object of some
// kinds before its strategy runs (a Service's IP families, cluster IPs and
// node ports), and returns the allocation's errors and the values kiln
// chose.
func (a *Admitter) allocate(obj runtime.Object) (field.ErrorList, []invented) {
	svc, ok := obj.(*api.Service)
	if !ok {
		return nil, nil
	}
	return a.services.allocateService(svc)
}

// allocationHidden drops validation's errors at the fields allocation sets
// once allocation failed: they are half filled in, and the server stops at
// allocation's error.
func allocationHidden(errs field.ErrorList) field.ErrorList {
	var out field.ErrorList
	for _, e := range errs {
		if !allocationField(e.Field) {
			out = append(out, e)
		}
	}
	return out
}

// scrub rewrites a message so that it names each invented value for what it
// is rather than giving kiln's stand-in (a validation message quotes the
// value it refuses: the server would quote its own).
func scrub(msg string, values []invented) string {
	for _, v := range values {
		if v.value == "" || !strings.Contains(msg, v.value) {
			continue
		}
		msg = strings.ReplaceAll(msg, `"`+v.value+`"`, v.says)
		msg = regexp.MustCompile(`(^|[^\w.:-])`+regexp.QuoteMeta(v.value)+`($|[^\w.:-])`).ReplaceAllString(msg, "${1}"+v.says+"${2}")
	}
	return msg
}
