// Package sarifschema compiles the official SARIF 2.1.0 JSON schema kept in
// report/testdata, for the tests that validate kiln's SARIF output.
package sarifschema

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// ID is the schema's own $id.
const ID = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"

// Path is the schema file in the repository.
func Path() string {
	_, self, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(self), "..", "..", "report", "testdata", "sarif-schema-2.1.0.json")
}

// Compile reads and compiles the schema, with format assertions on.
func Compile() (*jsonschema.Schema, error) {
	f, err := os.Open(Path())
	if err != nil {
		return nil, fmt.Errorf("the SARIF schema: %w", err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource(ID, doc); err != nil {
		return nil, err
	}
	return c.Compile(ID)
}
