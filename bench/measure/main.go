// Command measure runs a command and prints one table row: objects/s, wall
// seconds, CPU seconds (user+sys) and peak RSS, read from the child's rusage.
//
//	measure LABEL OBJECTS -- COMMAND [ARGS...]
package main

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"
)

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
	cmd := exec.Command(os.Args[4], os.Args[5:]...)
	cmd.Stdout, cmd.Stderr = nil, os.Stderr
	start := time.Now()
	err = cmd.Run()
	wall := time.Since(start)
	if cmd.ProcessState == nil {
		fmt.Fprintln(os.Stderr, "measure:", err)
		os.Exit(2)
	}
	// Exit code 1 means "findings", which a benchmark corpus is expected to have.
	if code := cmd.ProcessState.ExitCode(); code != 0 && code != 1 {
		fmt.Fprintf(os.Stderr, "measure: %s exited %d\n", os.Args[4], code)
		os.Exit(1)
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	fmt.Printf("| %-28s | %7d | %10.0f | %7.2f | %7.2f | %7.0f |\n",
		label, objects, float64(objects)/wall.Seconds(), wall.Seconds(), cpu.Seconds(), float64(ru.Maxrss)/1024)
}
