package e2e

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// reportTree has findings of every severity, a suppressed one, a finding
// whose message and object carry markup from the manifest, in several
// files and namespaces.
var reportTree = map[string]string{
	"deploy/rogue.yaml": badDeployment,
	"deploy/lab.yaml": strings.Replace(strings.ReplaceAll(badDeployment, "rogue", "lab"), "  namespace: shop\n",
		"  namespace: shop\n  annotations:\n    kiln.dev/ignore: \"psa/privileged # a lab machine\"\n", 1),
	"lab/pod.yaml": warnedPod,
	// A custom resource of a kind in no CRD catalog: schema/no-crd, an info.
	"monitoring/dashboard.yaml": `apiVersion: grafana.integreatly.org/v1beta1
kind: GrafanaDashboard
metadata:
  name: web
  namespace: monitoring
spec:
  json: "{}"
`,
	"inject/pod.yaml": `apiVersion: v1
kind: Pod
metadata:
  name: "<script>window.kilnInjected=1</script><img src=x onerror=window.kilnInjected=2>"
  namespace: lab
spec:
  containers:
    - name: app
      image: ghcr.io/acme/app:1.0
`,
}

// TestHTMLReportInBrowser lints reportTree with -f html and opens the page
// in headless Chromium: it loads nothing but itself, its script runs
// without an error (the Content-Security-Policy allows it), every finding
// shows with the source line it points at, markup from the manifests
// shows as text and runs nothing, and clicking the severity filter hides
// and shows findings, files and chart bars.
func TestHTMLReportInBrowser(t *testing.T) {
	chromium := requireTool(t, "chromium")
	dir := writeTree(t, reportTree)
	r := runIn(t, dir, nil, kilnBin, "lint", "-f", "html", ".")
	if r.code != 1 {
		t.Fatalf("kiln lint -f html: exit %d, want 1\n%s", r.code, r.stderr)
	}
	reportPath := filepath.Join(dir, "report.html")
	if err := os.WriteFile(reportPath, []byte(r.stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	var js struct {
		Summary struct{ Errors, Warnings, Infos, Suppressed int }
	}
	if err := json.Unmarshal([]byte(runIn(t, dir, nil, kilnBin, "lint", "-f", "json", ".").stdout), &js); err != nil {
		t.Fatal(err)
	}
	sum := js.Summary
	if sum.Errors == 0 || sum.Warnings == 0 || sum.Infos == 0 || sum.Suppressed == 0 {
		t.Fatalf("the tree must have findings of every kind, has %+v", sum)
	}
	total := sum.Errors + sum.Warnings + sum.Infos + sum.Suppressed

	b := startBrowser(t, chromium, 1280, 900)
	p := b.openPage()
	pageURL := (&url.URL{Scheme: "file", Path: reportPath}).String()
	p.navigate(pageURL)

	// The DOM's findings are the run's, by severity, suppressed apart.
	var counts map[string]int
	p.eval(`(() => { const n = s => document.querySelectorAll("#files .finding" + s).length;
		return {error: n('[data-severity="error"]:not([data-suppressed])'), warning: n('[data-severity="warning"]:not([data-suppressed])'),
			info: n('[data-severity="info"]:not([data-suppressed])'), suppressed: n("[data-suppressed]"), all: n("")}; })()`, &counts)
	want := map[string]int{"error": sum.Errors, "warning": sum.Warnings, "info": sum.Infos, "suppressed": sum.Suppressed, "all": total}
	if fmt.Sprint(counts) != fmt.Sprint(want) {
		t.Fatalf("findings on the page %v, want %v (kiln lint -f json)", counts, want)
	}
	p.checkShown(t, total, total)

	// Each place shows the line it points at, read from the file.
	var places []struct{ Pos, Hit string }
	p.eval(`[...document.querySelectorAll("#files [data-place]")].map(e => ({pos: e.querySelector(".pos").textContent,
		hit: (e.querySelector("pre.source .hit") || {textContent: "(none)"}).textContent}))`, &places)
	for _, pl := range places {
		file, line, ok := splitPos(pl.Pos)
		if !ok {
			t.Errorf("place %q names no file and line", pl.Pos)
			continue
		}
		lines := strings.Split(readFile(t, filepath.Join(dir, file)), "\n")
		if pl.Hit != lines[line-1] {
			t.Errorf("%s: the page shows %q, the file holds %q", pl.Pos, pl.Hit, lines[line-1])
		}
	}
	if len(places) < 5 {
		t.Errorf("%d places with findings, want one per file at least", len(places))
	}

	// Markup from the manifest is text: shown as written, nothing ran.
	var injected struct {
		Ran   bool
		Shown bool
		Imgs  int
	}
	p.eval(`({ran: window.kilnInjected !== undefined, imgs: document.images.length,
		shown: [...document.querySelectorAll("#files .message")].some(e => e.textContent.includes("<script>window.kilnInjected=1</script><img src=x onerror=window.kilnInjected=2>"))})`, &injected)
	if injected.Ran || injected.Imgs != 0 || !injected.Shown {
		t.Errorf("markup from the manifest: ran %v, %d images, shown as text %v", injected.Ran, injected.Imgs, injected.Shown)
	}

	// The filter: clicking "errors" off hides every error, the files left
	// without a finding, and the error bars; clicking it on shows them again.
	errorsAll := sum.Errors + p.count(`#files .finding[data-severity="error"][data-suppressed]`)
	p.click(`#filter input[data-filter="error"]`)
	p.checkShown(t, total-errorsAll, total)
	if n := p.count(`#files .finding[data-severity="error"]:not([hidden])`); n != 0 {
		t.Errorf("%d errors still shown with errors filtered out", n)
	}
	p.checkFiles(t)
	if hidden := p.count(`[data-file][hidden]`); hidden == 0 {
		t.Errorf("no file hidden with errors filtered out (deploy/rogue.yaml has only errors)")
	}
	var widths struct{ Error, Other float64 }
	p.eval(`(() => { const w = s => [...document.querySelectorAll("svg.chart rect" + s)].reduce((a, r) => a + Number(r.getAttribute("width")), 0);
		return {error: w(".sev-error"), other: w(".sev-warning") + w(".sev-info")}; })()`, &widths)
	if widths.Error != 0 || widths.Other == 0 {
		t.Errorf("charts with errors filtered out: error bars %v px wide, others %v px", widths.Error, widths.Other)
	}
	p.click(`#filter input[data-filter="error"]`)
	p.checkShown(t, total, total)
	p.checkFiles(t)

	// Suppressed findings off, then warnings and infos too: only the errors stay.
	p.click(`#filter input[data-filter="suppressed"]`)
	p.checkShown(t, total-sum.Suppressed, total)
	p.click(`#filter input[data-filter="warning"]`)
	p.click(`#filter input[data-filter="info"]`)
	p.checkShown(t, sum.Errors, total)
	p.checkFiles(t)
	if n := p.count(`#files .finding:not([hidden]):not([data-severity="error"]), #files .finding[data-suppressed]:not([hidden])`); n != 0 {
		t.Errorf("%d findings other than unsuppressed errors shown", n)
	}

	// Nothing but the page itself was requested, and nothing went wrong.
	for _, e := range b.eventsOf("Network.requestWillBeSent") {
		var req struct {
			Request struct{ URL string } `json:"request"`
		}
		json.Unmarshal(e.Params, &req)
		if req.Request.URL != pageURL {
			t.Errorf("the page requested %s", req.Request.URL)
		}
	}
	for _, m := range []string{"Runtime.exceptionThrown", "Log.entryAdded"} {
		for _, e := range b.eventsOf(m) {
			t.Errorf("%s: %s", m, e.Params)
		}
	}
	if len(b.eventsOf("Network.requestWillBeSent")) == 0 {
		t.Errorf("no request seen at all: the network events are not recorded")
	}
}

// count returns how many elements match selector.
func (p *page) count(selector string) int {
	p.b.t.Helper()
	sel, _ := json.Marshal(selector)
	var n int
	p.eval(`document.querySelectorAll(`+string(sel)+`).length`, &n)
	return n
}

// checkShown checks that shown findings are rendered (not only unhidden)
// and that the page says how many.
func (p *page) checkShown(t *testing.T, shown, total int) {
	t.Helper()
	var got struct {
		Visible int
		Text    string
	}
	p.eval(`({visible: [...document.querySelectorAll("#files .finding")].filter(e => e.checkVisibility()).length,
		text: document.getElementById("shown").textContent})`, &got)
	if want := strconv.Itoa(shown) + " of " + strconv.Itoa(total) + " findings shown"; got.Visible != shown || got.Text != want {
		t.Errorf("%d findings visible, the page says %q; want %d, %q", got.Visible, got.Text, shown, want)
	}
}

// checkFiles checks that a file's section (and its entry in the contents)
// is hidden exactly when none of its findings shows.
func (p *page) checkFiles(t *testing.T) {
	t.Helper()
	var wrong []string
	p.eval(`[...document.querySelectorAll("[data-file]")].filter(d =>
		d.hidden !== !d.querySelector(".finding:not([hidden])") ||
		document.querySelector('[data-toc="' + d.id + '"]').hidden !== d.hidden).map(d => d.id)`, &wrong)
	if len(wrong) > 0 {
		t.Errorf("files shown or hidden against their findings: %v", wrong)
	}
}

// splitPos splits "file:line:col".
func splitPos(pos string) (string, int, bool) {
	parts := strings.Split(pos, ":")
	if len(parts) < 3 {
		return "", 0, false
	}
	line, err := strconv.Atoi(parts[len(parts)-2])
	return strings.Join(parts[:len(parts)-2], ":"), line, err == nil && line > 0
}
