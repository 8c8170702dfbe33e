package main

// kiln's own rules written in Go (jobset/torchrun-nnodes, storage/…, api/…,
// object/duplicate, sidecar/injected-in-job),
// linked in for their init(). The single-object rules are policies in
// rules/policies (checkers_policies.go).
import (
	_ "github.com/kilnhq/kiln/rules/apiversions"
	_ "github.com/kilnhq/kiln/rules/duplicate"
	_ "github.com/kilnhq/kiln/rules/jobset"
	_ "github.com/kilnhq/kiln/rules/sidecar"
	_ "github.com/kilnhq/kiln/rules/storage"
)
