package conformance

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules"
)

// comparison is one corpus's counts and disagreements.
type comparison struct {
	corpus string
	row    row
	// differ are the disagreements no knownDifferences entry names, by
	// key, in the order found; named the named ones, with their reasons.
	differ map[string]*disagreement
	order  []string
	named  []string
	seen   map[string]bool
	// notes say what was not compared and why.
	notes []string
}

// note records what was not compared, once per text.
func (c *comparison) note(format string, args ...any) {
	text := c.corpus + ": " + fmt.Sprintf(format, args...)
	if !c.seen[text] {
		c.seen[text] = true
		c.notes = append(c.notes, "- "+text)
	}
}

// disagreement is one object's disagreement, and where its identical
// copies are.
type disagreement struct {
	text   string
	copies []string
}

func (c *comparison) failures() []string {
	var out []string
	for _, k := range c.order {
		d := c.differ[k]
		text := d.text
		if len(d.copies) > 0 {
			text += fmt.Sprintf("\n  and %d more: %s", len(d.copies), strings.Join(d.copies, ", "))
		}
		out = append(out, text)
	}
	return out
}

// fail records that kiln and the server disagree on what about o, unless
// knownDifferences names it (by corpus, object and what).
func (c *comparison) fail(o *manifest.Object, what string, k, srv verdict) {
	key := fmt.Sprintf("%s %s %s", c.corpus, o.Ref(), what)
	where := fmt.Sprintf("%s:%d", o.File, o.Pos().Line)
	if reason, ok := knownDifferences[key]; ok {
		c.row.named++
		if !c.seen[key] {
			c.seen[key] = true
			c.named = append(c.named, fmt.Sprintf("- %s (%s): %s", key, where, reason))
		}
		return
	}
	if d, ok := c.differ[key]; ok {
		d.copies = append(d.copies, where)
		return
	}
	c.differ[key] = &disagreement{text: fmt.Sprintf("%s %s: %s\n  server: %s\n  kiln:   %s", where, o.Ref(), what, srv.detail, k.detail)}
	c.order = append(c.order, key)
}

// request is one POST; identical ones (copies of an object) are sent once.
type request struct {
	path string
	body string
}

// answer is the server's response to a request.
type answer struct {
	code     int
	body     []byte
	warnings []string
}

const dryRun = "?dryRun=All&fieldValidation=Strict"

// runCorpus lints a corpus as `kiln lint` does, sends the same objects to
// a fresh server and compares.
func runCorpus(t *testing.T, c corpus) *comparison {
	cmp := &comparison{corpus: c.name, row: row{name: c.name}, differ: map[string]*disagreement{}, seen: map[string]bool{}}
	r := &cmp.row
	phases := newPhases()
	l := lintCorpus(t, c.paths)
	phases.done("kiln")
	r.notRendered = len(l.notRendered)
	for _, u := range l.notRendered {
		cmp.note("%s rendered nothing (an input error kiln reports): not compared", u)
	}
	kiln := l.verdicts(t, cmp)

	s := startServer(t)
	phases.done("server start")
	levels := ensureNamespaces(t, s, l.objects, l.opts)
	for _, ns := range slices.Sorted(maps.Keys(levels)) {
		cmp.note("namespace %s is not in the input: kiln assumed Pod Security %s (enforce), and the server's is labelled so", ns, levels[ns])
	}
	installShippedCRDs(t, s, l.objects)
	disc := newDiscovery(s)

	// What is sent: context objects for real, then dry-runs of the rest
	// and of the Pods of their templates.
	var send []*judged
	for _, j := range l.objects {
		switch {
		case j.body == nil:
			r.undecodable++ // an input error kiln reports; kubectl could not send it either
			cmp.note("%s:%d %s cannot be decoded (an input error kiln reports): not compared", j.obj.File, j.obj.Pos().Line, j.obj.Ref())
		case j.obj.Group() == "kiln.dev":
		default:
			send = append(send, j)
		}
	}
	answers := map[request]answer{}
	var context, rest []*judged
	for _, j := range send {
		if contextOrder(j.obj) != notContext {
			context = append(context, j)
		} else {
			rest = append(rest, j)
		}
	}
	created := createContext(t, s, disc, context, answers)
	waitForContext(t, s, created, rest, disc)
	phases.done("context")

	var reqs []request
	for _, j := range rest {
		if !disc.served(j.obj) && !builtinGroup(j.obj) {
			continue // a custom resource without its CRD: not compared
		}
		reqs = append(reqs, request{disc.path(j.obj), string(j.body)})
		for _, pod := range j.pods {
			reqs = append(reqs, request{podsPath(j.obj), string(pod)})
		}
	}
	before := len(answers)
	sendAll(t, s, reqs, answers, dryRun)
	phases.done(fmt.Sprintf("%d dry-runs", len(answers)-before))

	sent := map[request]bool{}
	for _, j := range send {
		o := j.obj
		if contextOrder(o) == notContext && !disc.served(o) && !builtinGroup(o) {
			r.noCRD++
			cmp.note("%s %s: a custom resource whose CRD is not in the input: not compared", o.APIVersion, o.Kind)
			if k := kiln[j]; k.rejected || k.denied || k.psaDenied || len(k.own) > 0 {
				cmp.note("%s:%d %s: kiln's errors on a custom resource without CRD not compared: %s", o.File, o.Pos().Line, o.Ref(), k.detail)
			}
			continue
		}
		req := request{disc.path(o), string(j.body)}
		r.objects++
		if sent[req] {
			r.copies++
		}
		sent[req] = true
		a := answers[req]
		srv := serverVerdict(a.code, a.body, a.warnings)
		k := kiln[j]
		cmp.compareObject(o, k, srv)
		if srv.rejected || k.rejected || o.Kind == "Pod" && o.Group() == "" {
			continue
		}
		// A Pod made from each pod template: enforce judges Pods only.
		for _, pod := range j.pods {
			a := answers[request{podsPath(o), string(pod)}]
			cmp.comparePod(o, k, serverVerdict(a.code, a.body, a.warnings))
		}
	}
	t.Logf("%s: %s", c.name, phases)
	return cmp
}

// phases times the steps of a corpus's run.
type phases struct {
	last  time.Time
	steps []string
}

func newPhases() *phases { return &phases{last: time.Now()} }

// done ends a step.
func (p *phases) done(step string) {
	now := time.Now()
	p.steps = append(p.steps, fmt.Sprintf("%s %.1fs", step, now.Sub(p.last).Seconds()))
	p.last = now
}

func (p *phases) String() string { return strings.Join(p.steps, ", ") }

// createContext creates the context objects for real, a kind after
// another (Namespaces, then CRDs…): first the first definition of each
// name, then the other copies, which find it there (a copy that differs is
// judged by the server's validation all the same: 409 comes after it). It
// returns the objects created.
func createContext(t *testing.T, s *apiServer, disc *discovery, objs []*judged, answers map[request]answer) []*judged {
	t.Helper()
	byOrder := make([][]*judged, notContext)
	for _, j := range objs {
		n := contextOrder(j.obj)
		byOrder[n] = append(byOrder[n], j)
	}
	var created []*judged
	for _, group := range byOrder {
		var first, copies []request
		named := map[string]bool{}
		for _, j := range group {
			req := request{disc.path(j.obj), string(j.body)}
			if name := req.path + "/" + j.obj.Name; j.obj.Name == "" || !named[name] {
				named[name] = true
				first = append(first, req)
			} else {
				copies = append(copies, req)
			}
		}
		sendAll(t, s, first, answers, "?fieldValidation=Strict")
		sendAll(t, s, copies, answers, "?fieldValidation=Strict")
		for _, j := range group {
			a := answers[request{disc.path(j.obj), string(j.body)}]
			if a.code == 201 {
				created = append(created, j)
			}
			if a.code == 409 && isNamespace(j.obj) && bootstrapNamespaces[j.obj.Name] && len(j.obj.Labels) > 0 {
				labelNamespace(t, s, j.obj.Name, j.obj.Labels) // as kubectl apply would
			}
		}
	}
	return created
}

// compareObject compares the answers for the object itself.
func (c *comparison) compareObject(o *manifest.Object, k kilnVerdict, srv verdict) {
	r := &c.row
	for _, f := range k.own {
		if reason, ok := ownRules[f.Rule]; ok {
			r.own++
			key := c.corpus + " own " + f.Rule
			if !c.seen[key] {
				c.seen[key] = true
				c.named = append(c.named, fmt.Sprintf("- %s: kiln's own rule, not the server's (%s)", f.Rule, reason))
			}
			continue
		}
		c.fail(o, "kiln error the server does not give ("+f.Rule+")", k.verdict, srv)
	}
	if srv.rejected {
		r.rejected++
	}
	switch {
	case srv.rejected && !k.rejected:
		r.missed++
		c.fail(o, "rejection", k.verdict, srv)
	case !srv.rejected && k.rejected:
		r.falseRejects++
		c.fail(o, "false rejection", k.verdict, srv)
	}
	if srv.rejected && len(k.admissionUnmarked) > 0 {
		// Admission never runs on a refused object: Pod Security's
		// findings on it must say they come after the first error.
		c.fail(o, "Pod Security findings on an object refused before admission ("+strings.Join(k.admissionUnmarked, ", ")+")", k.verdict, srv)
	}
	if srv.rejected || k.rejected {
		return
	}
	if srv.denied {
		r.denied++
	}
	if srv.denied != k.denied {
		if srv.denied {
			r.deniedMissed++
		} else {
			r.deniedFalse++
		}
		c.fail(o, "admission denial", k.verdict, srv)
	}
	agree := func(same bool, agreeing, differing *int, what string) {
		if same {
			*agreeing++
			return
		}
		*differing++
		c.fail(o, what, k.verdict, srv)
	}
	agree(srv.polWarn == k.polWarn, &r.polWarnAgree, &r.polWarnDiffer, "policy warning")
	agree(srv.warn == k.warn, &r.warnAgree, &r.warnDiffer, "server warning")
	// The server's Pod Security judges Pods and the built-in workload
	// kinds; kiln also judges JobSets' templates (the server judges only
	// the Pods a JobSet's Jobs create, compared below).
	if o.Group() != manifest.JobSetGroup {
		agree(srv.psaWarn == k.psaWarn, &r.psaWarnAgree, &r.psaWarnDiffer, "PSA warning")
	}
}

// comparePod compares Pod Security enforce on a Pod made from one of o's
// templates.
func (c *comparison) comparePod(o *manifest.Object, k kilnVerdict, pv verdict) {
	r := &c.row
	r.pods++
	if pv.rejected || (pv.denied && !strings.Contains(pv.detail, "PodSecurity")) {
		// Refused for another reason (a PriorityClass or a volume the
		// cluster would have): Pod Security never ran.
		r.podsNotCompared++
		c.note("%s:%d %s: a Pod of its template not compared: the server refused it before Pod Security: %s", o.File, o.Pos().Line, o.Ref(), pv.detail)
		return
	}
	denied := pv.denied && strings.Contains(pv.detail, "PodSecurity")
	if denied {
		r.podDenied++
	}
	if denied != k.psaDenied {
		if denied {
			r.podMissed++
		} else {
			r.podFalse++
		}
		c.fail(o, "PSA enforce on its pods", verdict{detail: k.psaDetail}, pv)
	}
}

// sendAll POSTs every request not answered yet, with the query (dryRun,
// or fieldValidation alone to create for real), a few at a time, each once.
func sendAll(t *testing.T, s *apiServer, reqs []request, answers map[request]answer, query string) {
	t.Helper()
	var todo []request
	queued := map[request]bool{}
	for _, req := range reqs {
		if _, done := answers[req]; !done && !queued[req] {
			queued[req] = true
			todo = append(todo, req)
		}
	}
	out := make([]answer, len(todo))
	errs := make([]error, len(todo))
	work := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				code, body, warnings, err := s.do("POST", todo[i].path+query, []byte(todo[i].body))
				out[i], errs[i] = answer{code, body, warnings}, err
			}
		}()
	}
	for i := range todo {
		work <- i
	}
	close(work)
	wg.Wait()
	for i, req := range todo {
		if errs[i] != nil {
			t.Fatalf("POST %s: %v", req.path, errs[i])
		}
		answers[req] = out[i]
	}
}

// podsPath is the collection the Pods of o's templates are created in.
func podsPath(o *manifest.Object) string {
	ns := o.Namespace
	if ns == "" {
		ns = "default"
	}
	return "/api/v1/namespaces/" + ns + "/pods"
}

// notContext is contextOrder's answer for objects sent as dry-runs.
const notContext = 5

// contextOrder is the order in which the context objects (what other
// objects are judged against) are created for real: Namespaces, CRDs,
// policies, their bindings, and PriorityClasses (which the Pods made from
// templates name); notContext for every other object.
func contextOrder(o *manifest.Object) int {
	switch {
	case isNamespace(o):
		return 0
	case o.Group() == "apiextensions.k8s.io" && o.Kind == "CustomResourceDefinition":
		return 1
	case o.Group() == "admissionregistration.k8s.io" && o.Kind == "ValidatingAdmissionPolicy":
		return 2
	case o.Group() == "admissionregistration.k8s.io" && o.Kind == "ValidatingAdmissionPolicyBinding":
		return 3
	case o.Group() == "scheduling.k8s.io" && o.Kind == "PriorityClass":
		return 4
	}
	return notContext
}

// verdicts is kiln's verdict on every object it judged, from the findings
// that point at it. It fails the test for an error finding on no object
// sent, which could then not be compared.
func (l *linted) verdicts(t *testing.T, c *comparison) map[*judged]kilnVerdict {
	t.Helper()
	byObj := findingsByObject(l.findings)
	out := map[*judged]kilnVerdict{}
	bodies := map[objectFile]string{}
	for _, j := range l.objects {
		k := objectFile{j.obj.Ref(), j.obj.File}
		if b, ok := bodies[k]; ok && b != string(j.body) {
			// Two different objects of one reference from one file
			// (kustomize overlays of one base): findings name no more.
			c.note("%s %s: objects from one source file, of one reference, differ (overlays of one base): each is judged with the findings of all", j.obj.File, j.obj.Ref())
		}
		bodies[k] = string(j.body)
		out[j] = kilnVerdictOf(j.obj, byObj[k])
	}
	for k, fs := range byObj {
		if _, ok := bodies[k]; ok {
			continue
		}
		for _, f := range fs {
			if f.Severity == rules.Error {
				t.Errorf("%s: %s:%d: %s %s on %s, which kiln did not judge as an object of that file: not compared", c.corpus, f.Pos.File, f.Pos.Line, f.Rule, f.Message, f.Object)
			}
		}
	}
	return out
}
