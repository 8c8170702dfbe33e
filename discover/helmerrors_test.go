package discover

import (
	"errors"
	"slices"
	"testing"

	chart "helm.sh/helm/v4/pkg/chart/v2"
)

// schemaViolations reads Helm's values schema message a violation a line,
// names a subchart's, and sorts them: the validator lists them in map
// order, which differs between runs.
func TestSchemaViolations(t *testing.T) {
	ch := &chart.Chart{Metadata: &chart.Metadata{Name: "app"}}
	msg := "values don't meet the specifications of the schema(s) in the following chart(s):\napp:\n- at '/replicas': got string, want integer\n- at '': missing property 'image'\ncommon:\n- at '/mode': value must be one of 'a', 'b'\n"
	want := []string{"at '': missing property 'image'", "at '/replicas': got string, want integer", "chart common at '/mode': value must be one of 'a', 'b'"}
	for i := 0; i < 2; i++ {
		if got := schemaViolations(ch, errors.New(msg)); !slices.Equal(got, want) {
			t.Fatalf("got %q\nwant %q", got, want)
		}
	}
	if got := violations(ch, errors.New("no schema lines")); !slices.Equal(got, []string{"no schema lines"}) {
		t.Errorf("a message without violations: %q", got)
	}
	if k := schemaKey(want[0]); k != "image" {
		t.Errorf("schemaKey(%q) = %q, want image", want[0], k)
	}
}
