package main

// Every checker, from the one list (rules/checkers); lint runs rules.Registered().
import _ "github.com/kilnhq/kiln/rules/checkers"
