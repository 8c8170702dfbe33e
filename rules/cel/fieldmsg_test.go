package cel

import (
	"reflect"
	"strings"
	"testing"
)

func TestSplitFieldMessages(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []FieldMessage
	}{
		{"spec.containers[1]: container \"a\" runs x: it never exits; fix it",
			[]FieldMessage{{"spec.containers[1]", "container \"a\" runs x: it never exits; fix it"}}},
		{"a.b[0].c: one | spec.x[\"nvidia.com/gpu\"]: two: three",
			[]FieldMessage{{"a.b[0].c", "one"}, {`spec.x["nvidia.com/gpu"]`, "two: three"}}},
		{"no field here: but a colon", []FieldMessage{{"", "no field here: but a colon"}}},
		{"just a message", []FieldMessage{{"", "just a message"}}},
		{" | spec: x |  ", []FieldMessage{{"spec", "x"}}},
		{"", []FieldMessage{{"", ""}}},
		{`spec["a b"]: quoted space`, []FieldMessage{{`spec["a b"]`, "quoted space"}}},
		{`spec["open: x`, []FieldMessage{{"", `spec["open: x`}}},
	} {
		if got := SplitFieldMessages(tc.in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("SplitFieldMessages(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestFieldMessagesPolicy: a policy with the kiln.dev/messages annotation
// reports one finding per entry at its field; without it, one finding on
// the object with the message as the server shows it.
func TestFieldMessagesPolicy(t *testing.T) {
	const policy = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: images
  annotations: {ANNOTATION}
spec:
  matchConstraints:
    resourceRules: [{apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [pods]}]
  validations:
    - expression: "!object.spec.containers.exists(c, c.image.endsWith(':latest'))"
      messageExpression: "object.spec.containers.transformList(i, c, c.image.endsWith(':latest'), 'spec.containers[' + string(i) + '].image: ' + c.image + ' is not pinned').join(' | ')"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: images}
spec: {policyName: images, validationActions: [Warn]}
---
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers:
    - {name: a, image: "a:latest"}
    - {name: b, image: "b:1"}
    - {name: c, image: "c:latest"}
`
	on := lint(t, strings.Replace(policy, "{ANNOTATION}", "{kiln.dev/messages: field-path}", 1), nil)
	check(t, on, []string{
		"23 warning policy/images: Validation failed for ValidatingAdmissionPolicy 'images' with binding 'images': a:latest is not pinned",
		"25 warning policy/images: Validation failed for ValidatingAdmissionPolicy 'images' with binding 'images': c:latest is not pinned",
	})
	off := lint(t, strings.Replace(policy, "{ANNOTATION}", "{}", 1), nil)
	check(t, off, []string{
		"18 warning policy/images: Validation failed for ValidatingAdmissionPolicy 'images' with binding 'images': spec.containers[0].image: a:latest is not pinned | spec.containers[2].image: c:latest is not pinned",
	})
}

func FuzzSplitFieldMessages(f *testing.F) {
	for _, s := range []string{"a.b: c | d[0]: e", "x", "", " | ", `s["k: v"]: m`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := SplitFieldMessages(s)
		if len(got) == 0 {
			t.Fatalf("%q: no entry", s)
		}
		for _, e := range got {
			if e.Field != "" && !isFieldPath(e.Field) {
				t.Fatalf("%q: field %q", s, e.Field)
			}
			if len(got) > 1 && strings.Contains(e.Message, FieldMessageSeparator) {
				t.Fatalf("%q: entry %q holds a separator", s, e.Message)
			}
		}
	})
}
