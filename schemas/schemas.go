// Package schemas embeds kiln's CUE schemas, the source of truth for the App
// spec (docs/design.md §3).
package schemas

import _ "embed"

// App is the CUE source of the App spec schema; its #App definition is what
// every spec is unified with.
//
//go:embed app.cue
var App string

// AppFile is the name the App schema carries in CUE error positions.
const AppFile = "schemas/app.cue"
