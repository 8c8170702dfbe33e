package main

import "github.com/kilnhq/kiln/session"

// The exit codes the tests expect, as the session maps outcomes to them.
const (
	exitFindings = session.ExitFindings
	exitInput    = session.ExitInput
)
