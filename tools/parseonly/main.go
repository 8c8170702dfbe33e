// Command parseonly reads manifests the way kiln lint does (parallel read,
// YAML parse, decode) and does nothing else: the baseline for `make bench`.
package main

import (
	"fmt"
	"os"

	"github.com/kilnhq/kiln/manifest"
)

func main() {
	set := manifest.Read(os.Args[1:], os.Stdin)
	fmt.Println(len(set.Objects()), "objects,", len(set.Errors()), "errors")
}
