// Command measure runs a command and prints one table row: objects/s, wall
// seconds, CPU seconds (user+sys) and peak RSS, read from the child's rusage.
// With RUNS=N in the environment it runs the command N times and prints the
// median wall and CPU time and the largest peak RSS, since a shared machine's
// speed drifts from one run to the next.
//
//	measure LABEL OBJECTS -- COMMAND [ARGS...]
package main

import (
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"syscall"
	"time"
)

type sample struct {
	wall, cpu time.Duration
	rssKB     int64
}

func main() {
	if len(os.Args) < 5 || os.Args[3] != "--" {
		fmt.Fprintln(os.Stderr, "usage: measure LABEL OBJECTS -- COMMAND [ARGS...]")
		os.Exit(2)
	}
	label := os.Args[1]
	objects, err := strconv.Atoi(os.Args[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, "measure: OBJECTS must be a number")
		os.Exit(2)
	}
	runs := 1
	if v := os.Getenv("RUNS"); v != "" {
		if runs, err = strconv.Atoi(v); err != nil || runs < 1 {
			fmt.Fprintln(os.Stderr, "measure: RUNS must be a positive number")
			os.Exit(2)
		}
	}
	var samples []sample
	for i := 0; i < runs; i++ {
		samples = append(samples, run(os.Args[4], os.Args[5:]))
	}
	var maxRSS int64
	for _, s := range samples {
		maxRSS = max(maxRSS, s.rssKB)
	}
	sort.Slice(samples, func(i, j int) bool { return samples[i].wall < samples[j].wall })
	wall := samples[len(samples)/2].wall
	sort.Slice(samples, func(i, j int) bool { return samples[i].cpu < samples[j].cpu })
	cpu := samples[len(samples)/2].cpu
	fmt.Printf("| %-28s | %7d | %10.0f | %7.2f | %7.2f | %7.0f |\n",
		label, objects, float64(objects)/wall.Seconds(), wall.Seconds(), cpu.Seconds(), float64(maxRSS)/1024)
}

func run(name string, args []string) sample {
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = nil, os.Stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if cmd.ProcessState == nil {
		fmt.Fprintln(os.Stderr, "measure:", err)
		os.Exit(2)
	}
	// Exit code 1 means "findings", which a benchmark corpus is expected to have.
	if code := cmd.ProcessState.ExitCode(); code != 0 && code != 1 {
		fmt.Fprintf(os.Stderr, "measure: %s exited %d\n", name, code)
		os.Exit(1)
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	return sample{wall: wall, cpu: time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), rssKB: ru.Maxrss}
}
