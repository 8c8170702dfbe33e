package admit

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kubernetes/pkg/apis/apps"

	"github.com/kilnhq/kiln/manifest"
)

// labelMutator sets a label on every Deployment it sees and records the
// replicas it saw (defaulting ran before it); deny refuses the request.
type labelMutator struct {
	value    string
	deny     bool
	replicas int32
	skipped  []string
}

func (m *labelMutator) Mutate(o *manifest.Object, obj runtime.Object, gvk schema.GroupVersionKind, res manifest.Resource) (runtime.Object, bool) {
	d, ok := obj.(*apps.Deployment)
	if !ok {
		return obj, false
	}
	m.replicas = d.Spec.Replicas
	d = d.DeepCopy()
	if d.Labels == nil {
		d.Labels = map[string]string{}
	}
	d.Labels["team"] = m.value
	return d, m.deny
}

func (m *labelMutator) Skip(o *manifest.Object, _ runtime.Object, _ schema.GroupVersionKind, _ manifest.Resource) {
	m.skipped = append(m.skipped, o.Kind)
}

// TestMutatorBetweenDefaultingAndValidation: the mutator sees the decoded,
// defaulted internal object; what it returns is what the strategy validates
// and what the admitted object holds; a denial refuses the object and
// marks what validation finds after it as found once the denial is gone.
func TestMutatorBetweenDefaultingAndValidation(t *testing.T) {
	for _, tc := range []struct {
		name, value string
		deny        bool
		wantInvalid bool
	}{
		{"valid label", "platform", false, false},
		{"invalid label", "not valid!", false, true},
		{"denied", "not valid!", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs, errs := manifest.Parse("in.yaml", []byte(deploy))
			if len(errs) > 0 {
				t.Fatal(errs)
			}
			m := &labelMutator{value: tc.value, deny: tc.deny}
			a := New(objs, manifest.BuiltinKinds(), Options{KubeVersion: manifest.LatestKube})
			a.SetMutator(m)
			res := a.Admit(objs[0])
			if m.replicas != 1 {
				t.Errorf("the mutator saw replicas %d, want the default 1", m.replicas)
			}
			content, _ := objs[0].Content()
			if got := manifest.ValueAt(content, "metadata.labels.team"); got != tc.value {
				t.Errorf("admitted label team = %v, want %q", got, tc.value)
			}
			invalid := false
			for _, p := range res.Problems {
				if strings.Contains(p.Message, "valid label") {
					invalid = true
					if tc.deny != p.Next {
						t.Errorf("problem Next = %v, want %v: %s", p.Next, tc.deny, p.Message)
					}
				}
			}
			if invalid != tc.wantInvalid {
				t.Errorf("invalid label reported = %v, want %v: %v", invalid, tc.wantInvalid, res.Problems)
			}
			if res.Rejected != (tc.deny || tc.wantInvalid) {
				t.Errorf("Rejected = %v", res.Rejected)
			}
		})
	}
}
