package admit

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"testing"

	sigyaml "sigs.k8s.io/yaml"
)

var update = flag.Bool("update", false, "rewrite generated files")

// TestShippedCRDs: the embedded JSON is the CRD YAML from upstream as
// kubectl would send it, without descriptions (validation does not read
// them, and they are most of its size). -update regenerates it.
func TestShippedCRDs(t *testing.T) {
	y, err := os.ReadFile("crds/jobset.x-k8s.io_jobsets.yaml")
	if err != nil {
		t.Fatal(err)
	}
	j, err := sigyaml.YAMLToJSON(y)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(j, &v); err != nil {
		t.Fatal(err)
	}
	want, err := json.Marshal(stripDescriptions(v))
	if err != nil {
		t.Fatal(err)
	}
	want = append(want, '\n')
	if *update {
		if err := os.WriteFile("crds/jobset.x-k8s.io_jobsets.json", want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(want, jobSetCRD) {
		t.Fatal("crds/jobset.x-k8s.io_jobsets.json is stale: run go test ./admit -run TestShippedCRDs -update")
	}
}

func stripDescriptions(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if k == "description" {
				if _, ok := e.(string); ok {
					delete(x, k)
					continue
				}
			}
			x[k] = stripDescriptions(e)
		}
	case []any:
		for i := range x {
			x[i] = stripDescriptions(x[i])
		}
	}
	return v
}
