package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"
)

// browser is headless Chromium driven through the Chrome DevTools
// Protocol over --remote-debugging-pipe: JSON messages ending in a NUL
// byte, commands written to the browser's fd 3, answers and events read
// from its fd 4. No port, no websocket, no library.
type browser struct {
	t    *testing.T
	cmd  *exec.Cmd
	in   *os.File // the browser's fd 3
	mu   sync.Mutex
	next int
	wait map[int]chan cdpMessage
	// events are every event received, in order (guarded by mu).
	events []cdpMessage
	done   chan struct{} // closed when the browser's output ends
}

type cdpMessage struct {
	ID        int             `json:"id,omitempty"`
	Method    string          `json:"method,omitempty"`
	SessionID string          `json:"sessionId,omitempty"`
	Params    json.RawMessage `json:"params,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     *struct {
		Message string `json:"message"`
	} `json:"error,omitempty"`
}

// chromiumFlags run Chromium headless, as root, on a machine without a
// network (nothing in the background tries to reach one).
var chromiumFlags = []string{
	"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
	"--disable-background-networking", "--disable-component-update", "--disable-sync",
	"--disable-default-apps", "--disable-extensions", "--mute-audio", "--hide-scrollbars",
}

// startBrowser starts Chromium with a fresh profile and a window of w×h.
func startBrowser(t *testing.T, chromium string, w, h int) *browser {
	t.Helper()
	toBrowser, in, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	out, fromBrowser, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	args := append(append([]string{}, chromiumFlags...), "--user-data-dir="+t.TempDir(),
		"--remote-debugging-pipe", fmt.Sprintf("--window-size=%d,%d", w, h), "about:blank")
	cmd := exec.Command(chromium, args...)
	cmd.ExtraFiles = []*os.File{toBrowser, fromBrowser} // fds 3 and 4
	stderr, err := os.Create(t.TempDir() + "/chromium.log")
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", chromium, err)
	}
	toBrowser.Close()
	fromBrowser.Close()
	b := &browser{t: t, cmd: cmd, in: in, wait: map[int]chan cdpMessage{}, done: make(chan struct{})}
	go b.read(out)
	t.Cleanup(func() {
		b.in.Close()
		select {
		case <-b.done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
		}
		cmd.Wait()
		stderr.Close()
	})
	return b
}

func (b *browser) read(out *os.File) {
	defer close(b.done)
	defer out.Close()
	r := bufio.NewReader(out)
	for {
		raw, err := r.ReadBytes(0)
		if err != nil {
			return
		}
		var m cdpMessage
		if json.Unmarshal(raw[:len(raw)-1], &m) != nil {
			continue
		}
		b.mu.Lock()
		if m.ID != 0 {
			if c := b.wait[m.ID]; c != nil {
				c <- m
				delete(b.wait, m.ID)
			}
		} else {
			b.events = append(b.events, m)
		}
		b.mu.Unlock()
	}
}

// call sends a command (to the browser, or to a page's session) and
// returns its result; an error answer or no answer in 30 s fails the test.
func (b *browser) call(session, method string, params any, result any) {
	b.t.Helper()
	b.mu.Lock()
	b.next++
	id := b.next
	c := make(chan cdpMessage, 1)
	b.wait[id] = c
	b.mu.Unlock()
	if params == nil {
		params = struct{}{}
	}
	msg, err := json.Marshal(map[string]any{"id": id, "method": method, "params": params, "sessionId": session})
	if err != nil {
		b.t.Fatal(err)
	}
	if session == "" {
		msg, _ = json.Marshal(map[string]any{"id": id, "method": method, "params": params})
	}
	if _, err := b.in.Write(append(msg, 0)); err != nil {
		b.t.Fatalf("%s: writing to the browser: %v", method, err)
	}
	select {
	case m := <-c:
		if m.Error != nil {
			b.t.Fatalf("%s: %s", method, m.Error.Message)
		}
		if result != nil {
			if err := json.Unmarshal(m.Result, result); err != nil {
				b.t.Fatalf("%s: %v in %s", method, err, m.Result)
			}
		}
	case <-b.done:
		b.t.Fatalf("%s: the browser exited", method)
	case <-time.After(30 * time.Second):
		b.t.Fatalf("%s: no answer in 30s", method)
	}
}

// eventsOf returns the events of one method received so far.
func (b *browser) eventsOf(method string) []cdpMessage {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []cdpMessage
	for _, e := range b.events {
		if e.Method == method {
			out = append(out, e)
		}
	}
	return out
}

// waitEvent waits up to 30 s for an event of method.
func (b *browser) waitEvent(method string) cdpMessage {
	b.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if es := b.eventsOf(method); len(es) > 0 {
			return es[len(es)-1]
		}
		time.Sleep(20 * time.Millisecond)
	}
	b.t.Fatalf("no %s event in 30s", method)
	return cdpMessage{}
}

// page is one tab, attached with its own session.
type page struct {
	b       *browser
	session string
}

// openPage opens a new tab on about:blank with the Page, Network, Runtime
// and Log domains enabled (so that every request, exception and console
// or security message is recorded).
func (b *browser) openPage() *page {
	b.t.Helper()
	var target struct {
		TargetID string `json:"targetId"`
	}
	b.call("", "Target.createTarget", map[string]any{"url": "about:blank"}, &target)
	var att struct {
		SessionID string `json:"sessionId"`
	}
	b.call("", "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}, &att)
	p := &page{b: b, session: att.SessionID}
	for _, d := range []string{"Page.enable", "Network.enable", "Runtime.enable", "Log.enable"} {
		b.call(p.session, d, nil, nil)
	}
	return p
}

// navigate loads url and waits for its load event.
func (p *page) navigate(url string) {
	p.b.t.Helper()
	before := len(p.b.eventsOf("Page.loadEventFired"))
	p.b.call(p.session, "Page.navigate", map[string]any{"url": url}, nil)
	deadline := time.Now().Add(30 * time.Second)
	for len(p.b.eventsOf("Page.loadEventFired")) == before {
		if time.Now().After(deadline) {
			p.b.t.Fatalf("%s did not load in 30s", url)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// eval evaluates a JavaScript expression in the page and decodes its
// value into out; an exception fails the test.
func (p *page) eval(expr string, out any) {
	p.b.t.Helper()
	var r struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		ExceptionDetails *struct {
			Text      string `json:"text"`
			Exception struct {
				Description string `json:"description"`
			} `json:"exception"`
		} `json:"exceptionDetails"`
	}
	p.b.call(p.session, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true}, &r)
	if r.ExceptionDetails != nil {
		p.b.t.Fatalf("evaluating %s: %s %s", expr, r.ExceptionDetails.Text, r.ExceptionDetails.Exception.Description)
	}
	if out != nil {
		if err := json.Unmarshal(r.Result.Value, out); err != nil {
			p.b.t.Fatalf("evaluating %s: %v (value %s)", expr, err, r.Result.Value)
		}
	}
}

// click scrolls the element selector names into view and clicks its
// centre with the mouse, as a person would (real input events, not
// element.click()).
func (p *page) click(selector string) {
	p.b.t.Helper()
	var xy [2]float64
	sel, _ := json.Marshal(selector)
	p.eval(`(() => { const e = document.querySelector(`+string(sel)+`);
		e.scrollIntoView({block: "center"}); const r = e.getBoundingClientRect();
		return [r.x + r.width / 2, r.y + r.height / 2]; })()`, &xy)
	for _, typ := range []string{"mousePressed", "mouseReleased"} {
		p.b.call(p.session, "Input.dispatchMouseEvent", map[string]any{"type": typ, "x": xy[0], "y": xy[1], "button": "left", "clickCount": 1}, nil)
	}
}
