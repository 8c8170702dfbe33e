package main

// Pod Security Admission rules (psa/*).
import _ "github.com/kilnhq/kiln/rules/psa"
