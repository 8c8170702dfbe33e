package discover

import (
	"io"
	"log"
	"os"
	"strings"
	"sync"
)

// captureMu makes one capture at a time: os.Stderr and the standard logger
// are the process's.
var captureMu sync.Mutex

// captureOutput points os.Stderr and the standard logger (where kustomize
// and Helm print their warnings) at a pipe until the returned function is
// called, which restores them and returns the distinct lines written, in
// order, without the "# " kustomize starts its warnings with. kiln says
// what they mean in its own notes; nothing reaches the user's stderr raw.
func captureOutput() func() []string {
	captureMu.Lock()
	r, w, err := os.Pipe()
	if err != nil {
		captureMu.Unlock()
		return func() []string { return nil }
	}
	saved, savedLog, savedFlags := os.Stderr, log.Writer(), log.Flags()
	os.Stderr = w
	log.SetOutput(w)
	log.SetFlags(0)
	done := make(chan []string)
	go func() {
		data, _ := io.ReadAll(r)
		var lines []string
		seen := map[string]bool{}
		for _, l := range strings.Split(string(data), "\n") {
			if l = strings.TrimSpace(strings.TrimPrefix(l, "# ")); l != "" && !seen[l] {
				seen[l] = true
				lines = append(lines, l)
			}
		}
		done <- lines
	}()
	return func() []string {
		os.Stderr = saved
		log.SetOutput(savedLog)
		log.SetFlags(savedFlags)
		w.Close()
		lines := <-done
		r.Close()
		captureMu.Unlock()
		return lines
	}
}
