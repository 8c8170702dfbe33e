// Command kiln compiles workload specs into Kubernetes manifests and lints
// manifests offline. See the README for commands and flags.
package main

import (
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
