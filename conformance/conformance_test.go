// Package conformance compares kiln's verdicts with a real kube-apiserver
// v1.37.2's (built from the Go module proxy by build-servers.sh, on
// 127.0.0.1): Namespaces, CRDs, policies and bindings of a corpus are
// created for real, every other object is sent as a server-side dry-run with
// fieldValidation=Strict (what `kubectl apply --dry-run=server` sends), and
// so is a Pod made from every pod template (enforce applies only to Pods).
// The server's refusals, denials and warnings are compared with kiln's
// findings; every disagreement is a test failure unless it is named in
// knownDifferences with its reason.
package conformance

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules"
	"github.com/kilnhq/kiln/rules/checkers"
)

// A corpus is one independent case: a fresh server judges it.
type corpus struct {
	name  string
	paths []string
}

func shared(p string) string { return filepath.Join("..", "..", "shared", p) }

func corpora(t *testing.T) []corpus {
	cs := []corpus{
		{"testdata", []string{"testdata/corpus"}},
		{"examples", examplesOut(t)},
	}
	for _, p := range []string{"jobset", "ingress-nginx", "metrics-server", "argo-cd", "kubernetes-examples"} {
		dir := shared(filepath.Join("realworld", p))
		if _, err := os.Stat(dir); err == nil {
			cs = append(cs, corpus{"realworld/" + p, []string{dir}})
		}
	}
	if gen := "../bench/gen-corpus"; fileExists(gen) {
		cs = append(cs, corpus{"generated", []string{generated(t, gen)}})
	}
	return cs
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

func examplesOut(t *testing.T) []string {
	outs, _ := filepath.Glob("../examples/*/out")
	sort.Strings(outs)
	return outs
}

// generated writes 300 objects of the seeded generator into a temp dir.
func generated(t *testing.T, gen string) string {
	dir := filepath.Join(t.TempDir(), "corpus")
	cmd := execCommand(gen, "300", dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("gen-corpus: %v\n%s", err, out)
	}
	return dir
}

// verdict is one side's answer for one request.
type verdict struct {
	rejected bool // refused before admission (decode, validation, not served)
	denied   bool // denied by admission (Pod Security enforce, a Deny policy)
	psaWarn  bool // Pod Security warnings
	polWarn  bool // policy Warn
	detail   string
}

// row counts one corpus's comparison.
type row struct {
	name                                    string
	objects, rejected, missed, falseRejects int
	pods, podDenied, podMissed, podFalse    int
	psaWarnAgree, psaWarnDiffer             int
	denied, deniedMissed, deniedFalse       int
	skipped, podsNotCompared                int
}

func TestConformance(t *testing.T) {
	needServers(t)
	var rows []row
	var failures []string
	for _, c := range corpora(t) {
		r, fails := runCorpus(t, c)
		rows = append(rows, r)
		failures = append(failures, fails...)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "| corpus | objects | server rejections | kiln misses | kiln false rejections | pods from templates | PSA enforce denials | kiln PSA misses | kiln PSA false | PSA warnings agree | differ | policy denials | missed | false | not compared (no CRD) | pods not compared |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d | %d | %d | %d | %d | %d | %d | %d | %d | %d | %d | %d |\n", r.name, r.objects, r.rejected, r.missed, r.falseRejects,
			r.pods, r.podDenied, r.podMissed, r.podFalse, r.psaWarnAgree, r.psaWarnDiffer, r.denied, r.deniedMissed, r.deniedFalse, r.skipped, r.podsNotCompared)
	}
	t.Logf("conformance against kube-apiserver v1.37.2:\n%s", b.String())
	if out := os.Getenv("KILN_CONFORMANCE_TABLE"); out != "" {
		_ = os.WriteFile(out, []byte(b.String()+"\n"+strings.Join(failures, "\n")+"\n"), 0o644)
	}
	for _, f := range failures {
		t.Error(f)
	}
}

// contextKinds are created for real before the dry-runs: what other objects
// are judged against.
func isContext(o *manifest.Object) bool {
	switch {
	case o.APIVersion == "v1" && o.Kind == "Namespace":
		return true
	case o.Group() == "apiextensions.k8s.io" && o.Kind == "CustomResourceDefinition":
		return true
	case o.Group() == "admissionregistration.k8s.io" && (o.Kind == "ValidatingAdmissionPolicy" || o.Kind == "ValidatingAdmissionPolicyBinding"):
		return true
	}
	return false
}

func runCorpus(t *testing.T, c corpus) (row, []string) {
	r := row{name: c.name}
	set := manifest.Read(c.paths, nil)
	objs := set.Objects()
	// What kubectl sends: the manifest as read, before kiln admits it.
	bodies := make([][]byte, len(objs))
	for i, o := range objs {
		content, err := o.Content()
		if err != nil {
			continue
		}
		bodies[i], _ = json.Marshal(content)
		var raw map[string]any
		_ = json.Unmarshal(bodies[i], &raw)
		rawContent[o] = raw // a copy: admission changes the object's content
	}
	opts := rules.DefaultOptions()
	eng := &rules.Engine{Checkers: checkers.All(), Options: opts, Config: &rules.Config{}}
	res, err := eng.Run(objs, nil)
	if err != nil {
		t.Fatalf("%s: kiln: %v", c.name, err)
	}
	kiln := kilnVerdicts(objs, res)

	s := startServer(t)
	kinds := manifest.BuiltinKinds()
	kinds.AddCRDs(objs)
	var failures []string
	fail := func(o *manifest.Object, what string, k, srv verdict) {
		key := fmt.Sprintf("%s %s", c.name, o.Ref())
		if reason, ok := knownDifferences[key+" "+what]; ok {
			t.Logf("known difference: %s %s: %s", key, what, reason)
			return
		}
		failures = append(failures, fmt.Sprintf("%s:%d %s: %s\n  server: %s\n  kiln:   %s", o.File, o.Pos().Line, o.Ref(), what, srv.detail, k.detail))
	}
	ensureNamespaces(t, s, objs, kinds)
	installShippedCRDs(t, s, objs)
	// Context first, for real, in dependency order.
	order := func(o *manifest.Object) int {
		switch o.Kind {
		case "Namespace":
			return 0
		case "CustomResourceDefinition":
			return 1
		case "ValidatingAdmissionPolicy":
			return 2
		}
		return 3
	}
	idx := make([]int, len(objs))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return order(objs[idx[a]]) < order(objs[idx[b]]) })
	waited := false
	for _, i := range idx {
		o := objs[i]
		if bodies[i] == nil || o.Group() == "kiln.dev" {
			continue
		}
		res, ok := kinds.Lookup(schemaGVK(o))
		if !ok && !builtinGroup(o) {
			r.skipped++ // a custom resource without its CRD: the server would 404
			continue
		}
		if !isContext(o) && !waited {
			waitForContext(t, s, objs, kinds)
			waited = true
		}
		r.objects++
		path := resourcePath(o, res, ok)
		dry := "?dryRun=All&fieldValidation=Strict"
		if isContext(o) {
			dry = "?fieldValidation=Strict"
		}
		code, body, warnings, err := s.do("POST", path+dry, bodies[i])
		if err != nil {
			t.Fatalf("%s: %v", o.Ref(), err)
		}
		srv := serverVerdict(code, body, warnings)
		k := kiln[o]
		if srv.rejected {
			r.rejected++
		}
		switch {
		case srv.rejected && !k.rejected:
			r.missed++
			fail(o, "rejection", k.verdict, srv)
		case !srv.rejected && k.rejected && !srv.denied:
			r.falseRejects++
			fail(o, "false rejection", k.verdict, srv)
		}
		if srv.rejected || k.rejected {
			continue
		}
		if srv.denied {
			r.denied++
		}
		if srv.denied != k.denied && !srv.rejected {
			if srv.denied {
				r.deniedMissed++
			} else {
				r.deniedFalse++
			}
			fail(o, "admission denial", k.verdict, srv)
		}
		// The server's Pod Security judges Pods and the built-in workload
		// kinds; kiln also judges JobSets' templates (the server judges only
		// the Pods a JobSet's Jobs create, compared below).
		if o.Group() == manifest.JobSetGroup {
			// not compared
		} else if srv.psaWarn == k.psaWarn {
			r.psaWarnAgree++
		} else {
			r.psaWarnDiffer++
			fail(o, "PSA warning", k.verdict, srv)
		}
		// A Pod made from each pod template: enforce judges Pods only.
		if o.Kind == "Pod" && o.Group() == "" {
			continue
		}
		for _, pod := range podsFrom(o) {
			r.pods++
			ns := o.Namespace
			if ns == "" {
				ns = "default"
			}
			code, body, warnings, err := s.do("POST", "/api/v1/namespaces/"+ns+"/pods?dryRun=All&fieldValidation=Strict", pod)
			if err != nil {
				t.Fatal(err)
			}
			pv := serverVerdict(code, body, warnings)
			if pv.rejected || (code == 403 && !strings.Contains(pv.detail, "PodSecurity")) {
				// Refused for another reason (a PriorityClass or a volume the
				// cluster would have): Pod Security never ran.
				r.podsNotCompared++
				continue
			}
			denied := pv.denied && strings.Contains(pv.detail, "PodSecurity")
			if denied {
				r.podDenied++
			}
			if denied != k.psaDenied {
				_ = pv
				if denied {
					r.podMissed++
				} else {
					r.podFalse++
				}
				fail(o, "PSA enforce on its pods", verdict{detail: k.psaDetail}, pv)
			}
		}
	}
	return r, failures
}

func schemaGVK(o *manifest.Object) schemaGVKType {
	return schemaGVKType{Group: o.Group(), Version: o.Version(), Kind: o.Kind}
}

// builtinGroup reports whether the API server itself serves the object's
// group (kiln's table of built-in kinds): other groups need a CRD.
func builtinGroup(o *manifest.Object) bool {
	for _, r := range builtinKinds.All() {
		if r.GVK.Group == o.Group() && !r.CRD {
			return true
		}
	}
	return false
}

var builtinKinds = manifest.BuiltinKinds()

// resourcePath is the collection an object is POSTed to.
func resourcePath(o *manifest.Object, r manifest.Resource, known bool) string {
	gv := "/api/" + o.Version()
	if o.Group() != "" {
		gv = "/apis/" + o.APIVersion
	}
	resource := manifest.GuessResource(o.Kind)
	namespaced := true
	if known {
		resource, namespaced = r.GVR.Resource, r.Namespaced
	}
	if !namespaced {
		return gv + "/" + resource
	}
	ns := o.Namespace
	if ns == "" {
		ns = "default"
	}
	return gv + "/namespaces/" + ns + "/" + resource
}

// ensureNamespaces creates the namespaces objects live in that the corpus
// does not define, labelled as kiln judges such workloads by default
// (restricted, enforce at latest).
func ensureNamespaces(t *testing.T, s *apiServer, objs []*manifest.Object, kinds *manifest.Kinds) {
	defined := map[string]bool{"default": true}
	for _, o := range objs {
		if o.APIVersion == "v1" && o.Kind == "Namespace" {
			defined[o.Name] = true
		}
	}
	need := map[string]bool{}
	for _, o := range objs {
		if o.Namespace != "" && !defined[o.Namespace] {
			need[o.Namespace] = true
		}
	}
	need["default"] = true
	for ns := range need {
		body := fmt.Sprintf(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":%q,"labels":{"pod-security.kubernetes.io/enforce":"restricted"}}}`, ns)
		if ns == "default" {
			code, _, _, _ := s.do("PATCH", "/api/v1/namespaces/default", nil)
			_ = code
			patch := `{"metadata":{"labels":{"pod-security.kubernetes.io/enforce":"restricted"}}}`
			req := []byte(patch)
			_, _, _, _ = s.doPatch("/api/v1/namespaces/default", req)
			continue
		}
		if code, b, _, err := s.do("POST", "/api/v1/namespaces", []byte(body)); err != nil || (code != 201 && code != 409) {
			t.Fatalf("namespace %s: %d %s %v", ns, code, status(b), err)
		}
	}
}

// waitForContext waits for CRDs to be established and policies to take
// effect (a policy acts once its informers synced).
func waitForContext(t *testing.T, s *apiServer, objs []*manifest.Object, kinds *manifest.Kinds) {
	deadline := time.Now().Add(30 * time.Second)
	for _, o := range objs {
		if o.Kind != "CustomResourceDefinition" {
			continue
		}
		for time.Now().Before(deadline) {
			code, body, _, _ := s.do("GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"+o.Name, nil)
			if code != 200 || strings.Contains(string(body), `"type":"Established","status":"True"`) {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	hasPolicy := false
	for _, o := range objs {
		if o.Kind == "ValidatingAdmissionPolicyBinding" {
			hasPolicy = true
		}
	}
	if hasPolicy {
		probePolicies(t, s)
	}
}
