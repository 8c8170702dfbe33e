package conformance

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kilnhq/kiln/admit/policytest"
	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/report"
)

// policyTestSuites are the kiln test suites whose every case is sent to a
// real kube-apiserver: together they hold each outcome kind (allowed,
// denied, warned, Audit failures, audit annotations), CREATE, UPDATE and
// DELETE, users and groups, dry-run, and a mutation.
var policyTestSuites = []string{
	"testdata/policytest/requests/kiln-test.yaml",
	"../policytest/testdata/readme/kiln-test.yaml",
	"testdata/policytest/mutation/kiln-test.yaml",
	"testdata/policytest/generatename/kiln-test.yaml",
}

// TestPolicyTestSuitesPass: every case of the suites sent to the server
// passes under kiln test (no server needed): what each case expects is
// kiln's answer, which TestPolicyTest compares with the server's (the
// generatename suite: a policy reads the generated name and sees no
// managedFields, a named difference).
func TestPolicyTestSuitesPass(t *testing.T) {
	for _, file := range policyTestSuites {
		s, err := policytest.Load(file)
		if err != nil {
			t.Fatal(err)
		}
		results, _, err := policytest.Run(s)
		if err != nil {
			t.Fatal(err)
		}
		if len(results) != len(s.Cases) {
			t.Errorf("%s: %d results for %d cases", file, len(results), len(s.Cases))
		}
		for _, r := range results {
			if r.Status != report.TestPass {
				t.Errorf("%s: %s: %s (expected %s, got %s)", r.Pos, r.Case, r.Message, r.Expected, r.Got)
			}
		}
	}
}

// TestPolicyTest runs the suites with kiln test and sends each case's
// request to a fresh kube-apiserver per suite, as the requesting user
// (impersonated), for real or as a dry-run as the case says. The server's
// outcome, deciding policy and message must be kiln's; the warnings, Audit
// failures and audit annotations (read from the audit log) must be what
// the case expects, which kiln's passing case says it found; the server's
// admitted object must hold what the case's admittedObject writes, which
// kiln's mutation (admit/mutate) gave. A case kiln cannot evaluate must say
// so, and the server's answer is still checked against the case.
func TestPolicyTest(t *testing.T) {
	var table []string
	for _, file := range policyTestSuites {
		judged, err := policytest.Load(file)
		if err != nil {
			t.Fatal(err)
		}
		results, _, err := policytest.Run(judged)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := policytest.Load(file) // the objects as written, not admitted
		if err != nil {
			t.Fatal(err)
		}
		s := startServer(t)
		d := newDiscovery(s)
		setUpSuite(t, s, d, raw)
		for i, c := range raw.Cases {
			k := results[i]
			srv := sendCase(t, s, d, c)
			named, ok := knownPolicyDifferences[judged.Name+": "+c.Name]
			if ok {
				srv = named.apply(t, c, k, srv)
			}
			agree := comparePolicyCase(t, file, c, k, srv)
			verdict := map[bool]string{true: "yes", false: "NO"}[agree]
			if ok && agree {
				verdict = "named: " + named.Reason
			}
			table = append(table, fmt.Sprintf("| %s | %s | %s | %s | %s | %s |", judged.Name, c.Name, c.Request.Operation, k.Got, srv.summary(), verdict))
		}
	}
	t.Logf("\n| suite | case | operation | kiln | kube-apiserver v1.37.2 | agree |\n| --- | --- | --- | --- | --- | --- |\n%s", strings.Join(table, "\n"))
}

// policyAnswer is the server's answer to one request.
type policyAnswer struct {
	code     int
	outcome  string // allowed, denied, warned
	policy   string // the policy that denied, or the first that warned
	text     string // the denial's or that warning's text from "ValidatingAdmissionPolicy …" / "Validation failed …"
	warnings []string
	audit    []string          // messages of validation_failure
	annots   map[string]string // published audit annotations
	object   map[string]any
}

func (a policyAnswer) summary() string {
	s := a.outcome
	if a.policy != "" {
		s += " by " + a.policy
	}
	return fmt.Sprintf("%s (%d)", s, a.code)
}

var (
	deniedRE = regexp.MustCompile(`(ValidatingAdmissionPolicy '([^']*)'(?: with binding '[^']*')? denied request: .*)$`)
	warnRE   = regexp.MustCompile(`^Validation failed for ValidatingAdmissionPolicy '([^']*)' with binding '[^']*': (.*)$`)
)

// setUpSuite creates what exists in the cluster (Namespaces first), then
// the policies and bindings, and waits until they take effect.
func setUpSuite(t *testing.T, s *apiServer, d *discovery, suite *policytest.Suite) {
	objs := append(append([]*manifest.Object(nil), suite.Cluster...), suite.Policies...)
	slices.SortStableFunc(objs, func(a, b *manifest.Object) int { return policyOrder(a) - policyOrder(b) })
	for _, o := range objs {
		if code, body, _, err := s.do("POST", d.path(o), bodyOf(t, o)); err != nil || code != 201 {
			t.Fatalf("%s: creating %s: %d %s %v", suite.File, o.Ref(), code, status(body), err)
		}
	}
	probePolicies(t, s)
	for _, o := range suite.Policies {
		if o.Kind == "MutatingAdmissionPolicy" {
			probeMutation(t, s)
			break
		}
	}
}

func policyOrder(o *manifest.Object) int {
	switch o.Kind {
	case "Namespace":
		return 0
	case "ValidatingAdmissionPolicy", "MutatingAdmissionPolicy":
		return 2
	case "ValidatingAdmissionPolicyBinding", "MutatingAdmissionPolicyBinding":
		return 3
	}
	return 1
}

// probeMutation waits until a MutatingAdmissionPolicy changes a dry-run
// ConfigMap (its informers sync after the validating ones).
func probeMutation(t *testing.T, s *apiServer) {
	probe := []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"kiln-map-probe"}}`)
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(300 * time.Millisecond) {
		code, body, _, _ := s.do("POST", "/api/v1/namespaces/default/configmaps?dryRun=All", probe)
		if code == 201 && bytes.Contains(body, []byte(`"labels"`)) {
			return
		}
	}
	t.Fatal("the MutatingAdmissionPolicy never took effect")
}

// sendCase puts the cluster in the state the case starts from (its
// oldObject stored, its object absent) and sends its request.
func sendCase(t *testing.T, s *apiServer, d *discovery, c *policytest.Case) policyAnswer {
	r := c.Request
	main := r.Object
	if main == nil {
		main = r.OldObject
	}
	item := d.path(main) + "/" + main.Name
	if main.Name != "" { // a generateName create makes a new object each time
		if code, body, _, err := s.do("DELETE", item, nil); err != nil || (code != 200 && code != 404) {
			t.Fatalf("%s: resetting %s: %d %s %v", c.Pos, main.Ref(), code, status(body), err)
		}
	}
	var rv string
	if r.OldObject != nil {
		code, body, _, err := s.do("POST", d.path(r.OldObject), bodyOf(t, r.OldObject))
		if err != nil || code != 201 {
			t.Fatalf("%s: creating oldObject %s: %d %s %v", c.Pos, r.OldObject.Ref(), code, status(body), err)
		}
		var created struct {
			Metadata struct {
				ResourceVersion string `json:"resourceVersion"`
			} `json:"metadata"`
		}
		_ = json.Unmarshal(body, &created)
		rv = created.Metadata.ResourceVersion
	}
	query := ""
	if r.DryRun {
		query = "?dryRun=All"
	}
	var method, path string
	var body []byte
	switch r.Operation {
	case "CREATE":
		method, path, body = "POST", d.path(r.Object), bodyOf(t, r.Object)
	case "UPDATE":
		c, err := r.Object.Content()
		if err != nil {
			t.Fatal(err)
		}
		u := map[string]any{}
		for k, v := range c {
			u[k] = v
		}
		md := map[string]any{}
		for k, v := range c["metadata"].(map[string]any) {
			md[k] = v
		}
		md["resourceVersion"] = rv
		u["metadata"] = md
		body, _ = json.Marshal(u)
		method, path = "PUT", item
	case "DELETE":
		method, path = "DELETE", item
	}
	user, groups := r.User, r.Groups
	if user == "" {
		user, groups = "kiln:offline", []string{"system:authenticated"}
	}
	return s.doAs(t, method, path+query, body, user, groups)
}

// doAs sends a request as an impersonated user and reads its audit event.
func (s *apiServer) doAs(t *testing.T, method, path string, body []byte, user string, groups []string) policyAnswer {
	req, err := http.NewRequest(method, s.url+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+s.token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Impersonate-User", user)
	for _, g := range groups {
		req.Header.Add("Impersonate-Group", g)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(resp.Body)
	a := policyAnswer{code: resp.StatusCode, outcome: "allowed", annots: map[string]string{}}
	for _, w := range resp.Header.Values("Warning") {
		if i := strings.Index(w, `"`); i >= 0 {
			w = strings.TrimSuffix(w[i+1:], `"`)
		}
		if m := warnRE.FindStringSubmatch(w); m != nil {
			a.warnings = append(a.warnings, m[2])
			if a.outcome == "allowed" {
				a.outcome, a.policy, a.text = "warned", m[1], w
			}
		}
	}
	if resp.StatusCode >= 300 {
		a.outcome, a.policy, a.text = "denied", "", status(buf.Bytes())
		if m := deniedRE.FindStringSubmatch(a.text); m != nil {
			a.policy, a.text = m[2], m[1]
		}
	} else {
		_ = json.Unmarshal(buf.Bytes(), &a.object)
	}
	for k, v := range s.auditAnnotations(t, resp.Header.Get("Audit-Id")) {
		if k == "validation.policy.admission.k8s.io/validation_failure" {
			var failures []struct {
				Message string `json:"message"`
			}
			_ = json.Unmarshal([]byte(v), &failures)
			for _, f := range failures {
				a.audit = append(a.audit, f.Message)
			}
			continue
		}
		if prefix, _, _ := strings.Cut(k, "/"); !strings.Contains(prefix, "k8s.io") && !strings.Contains(prefix, "kubernetes.io") {
			a.annots[k] = v // a policy's (<policy name>/<key>)
		}
	}
	return a
}

// auditAnnotations returns the annotations of a request's ResponseComplete
// audit event.
func (s *apiServer) auditAnnotations(t *testing.T, id string) map[string]string {
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		f, err := os.Open(s.auditLog)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			var ev struct {
				AuditID     string            `json:"auditID"`
				Stage       string            `json:"stage"`
				Annotations map[string]string `json:"annotations"`
			}
			if json.Unmarshal(sc.Bytes(), &ev) == nil && ev.AuditID == id && ev.Stage == "ResponseComplete" {
				f.Close()
				return ev.Annotations
			}
		}
		f.Close()
	}
	t.Fatalf("no audit event for request %s", id)
	return nil
}

// apply checks that the server's answer differs from kiln's row as named
// (the server's text says Server where kiln's message says Kiln) and
// returns the answer with kiln's words in their place, so that every other
// difference is still found.
func (p policyDifference) apply(t *testing.T, c *policytest.Case, k report.TestCase, srv policyAnswer) policyAnswer {
	t.Helper()
	if !strings.Contains(srv.text, p.Server) || !strings.Contains(k.Message, p.Kiln) {
		t.Errorf("%s: %s: the named difference (kiln %q, the server %q) is not the one seen: kiln %q, the server %q", c.Pos, c.Name, p.Kiln, p.Server, k.Message, srv.text)
		return srv
	}
	srv.text = strings.Replace(srv.text, p.Server, p.Kiln, 1)
	for i, w := range srv.warnings {
		srv.warnings[i] = strings.Replace(w, p.Server, p.Kiln, 1)
	}
	return srv
}

// comparePolicyCase reports every difference between kiln's row and the
// server's answer; it returns whether they agree.
func comparePolicyCase(t *testing.T, file string, c *policytest.Case, k report.TestCase, srv policyAnswer) bool {
	t.Helper()
	agree := true
	diff := func(format string, args ...any) {
		agree = false
		t.Errorf("%s: %s: "+format, append([]any{c.Pos, c.Name}, args...)...)
	}
	if k.Status == report.TestError {
		// A mutation kiln cannot evaluate yet: it must say so, and the
		// server's admitted object is what the case expects.
		if !strings.Contains(k.Message, "cannot evaluate mutations") {
			diff("kiln could not evaluate the case: %s", k.Message)
		}
		if w := c.Expect.Admitted; w != nil {
			want, _ := w.Content()
			if d := subsetOf("", want, srv.object); d != "" {
				diff("the server's admitted object differs from the expected one: %s", d)
			}
		}
		if string(c.Expect.Outcome) != srv.outcome {
			diff("the server answered %s, the case expects %s", srv.summary(), c.Expect.Outcome)
		}
		return agree
	}
	kOutcome, kPolicy, _ := strings.Cut(k.Got, " by ")
	if kPolicy == "the API server's validation" {
		kPolicy = ""
	}
	if kOutcome != srv.outcome || kPolicy != srv.policy {
		diff("kiln got %q, the server %s: %s", k.Got, srv.summary(), srv.text)
	}
	if srv.policy != "" && k.Message != srv.text {
		diff("kiln's message %q, the server's %q", k.Message, srv.text)
	}
	if k.Got == "denied" && srv.outcome == "denied" && !strings.Contains(srv.text, k.Message) {
		// A denial by a MutatingAdmissionPolicy: the server's message.
		diff("kiln's message %q is not in the server's %q", k.Message, srv.text)
	}
	if k.Status != report.TestPass {
		diff("kiln's case did not pass: %s", k.Message)
	}
	e := c.Expect
	if e.Warnings != nil && !slices.Equal(e.Warnings, srv.warnings) {
		diff("warnings: the case (and kiln) %q, the server %q", e.Warnings, srv.warnings)
	}
	if e.Audit != nil && !slices.Equal(e.Audit, srv.audit) {
		diff("Audit failures: the case (and kiln) %q, the server %q", e.Audit, srv.audit)
	}
	if e.AuditAnnotations != nil && fmt.Sprint(e.AuditAnnotations) != fmt.Sprint(srv.annots) {
		diff("audit annotations: the case (and kiln) %v, the server %v", e.AuditAnnotations, srv.annots)
	}
	if w := e.Admitted; w != nil && srv.outcome != "denied" {
		want, _ := w.Content()
		if d := subsetOf("", want, srv.object); d != "" {
			diff("the server's admitted object differs from the case's (and kiln's): %s", d)
		}
	}
	return agree
}

// subsetOf returns the first field of want that got lacks or differs in.
func subsetOf(path string, want, got any) string {
	if w, ok := want.(map[string]any); ok {
		g, _ := got.(map[string]any)
		for k, v := range w {
			if d := subsetOf(path+"."+k, v, g[k]); d != "" {
				return d
			}
		}
		return ""
	}
	if fmt.Sprint(want) != fmt.Sprint(got) {
		return fmt.Sprintf("%s: want %v, got %v", path, want, got)
	}
	return ""
}
