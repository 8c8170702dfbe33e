package main

// kiln's own rules (sidecar/…, jobset/…, storage/…, api/…), linked in for their init().
import (
	_ "github.com/kilnhq/kiln/rules/apiversions"
	_ "github.com/kilnhq/kiln/rules/jobset"
	_ "github.com/kilnhq/kiln/rules/sidecar"
	_ "github.com/kilnhq/kiln/rules/storage"
)
