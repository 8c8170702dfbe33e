package main

// The API server's create path (schema/*) and kubectl's YAML reading (yaml/*):
// runs before every other checker and hands them the admitted objects.
import _ "github.com/kilnhq/kiln/rules/schema"
