package stage_test

import (
	"os"
	"slices"
	"testing"

	"github.com/kilnhq/kiln/admit"
	"github.com/kilnhq/kiln/admit/mutate"
	"github.com/kilnhq/kiln/admit/stage"
	"github.com/kilnhq/kiln/manifest"
)

func parse(t *testing.T, src string) []*manifest.Object {
	t.Helper()
	objs, errs := manifest.Parse("test.yaml", []byte(src))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	return objs
}

func rulesOf(ps []manifest.Problem) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Rule)
	}
	return out
}

var opts = stage.Options{KubeVersion: manifest.LatestKube, User: "kiln:offline", Groups: []string{"system:authenticated"}, Authorizer: "deny"}

// TestAdmit: each object judged is admitted in place, and what admission
// found is on the object (manifest.Object.Admission).
func TestAdmit(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		judged    bool
		problems  []string
		refused   bool
	}{
		{"valid", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: shop}\ndata: {a: b}\n", true, nil, false},
		{"unknown field", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop}\nspec:\n  replica: 3\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec: {containers: [{name: app, image: nginx}]}\n",
			true, []string{admit.RuleUnknownField}, true},
		{"custom resource without CRD", "apiVersion: example.com/v1\nkind: Gizmo\nmetadata: {name: g, namespace: shop}\nspec: {size: 3}\n", false, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := parse(t, tc.src)[0]
			stage.New(nil, nil, opts).Admit(o)
			a := o.Admission
			if a == nil {
				t.Fatal("no Admission")
			}
			if a.Judged != tc.judged || !slices.Equal(rulesOf(a.Problems), tc.problems) || o.Refused != tc.refused || a.Context {
				t.Errorf("Admission %+v, Refused %v; want judged %v, problems %v, refused %v, not context", a, o.Refused, tc.judged, tc.problems, tc.refused)
			}
			c, err := o.Content()
			if err != nil {
				t.Fatal(err)
			}
			if md, _ := c["metadata"].(map[string]any); tc.judged && md["uid"] == nil {
				t.Errorf("content not admitted (no uid): %v", c)
			}
		})
	}
}

// TestContext: the context is admitted when the stage is made; the same
// object judged keeps its admission, a document read again takes over its
// copy's, and a Namespace copy keeps only its typed Namespace.
func TestContext(t *testing.T) {
	const src = "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: fast}\nprovisioner: ebs.csi.aws.com\n---\napiVersion: v1\nkind: Namespace\nmetadata: {name: shop, labels: {team: a}}\n"
	ctx := parse(t, src)
	for _, o := range ctx {
		o.ReadAhead = true
	}
	inMemory := parse(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: shop}\n")[0]
	s := stage.New(append(ctx, inMemory), nil, opts)
	for _, o := range append(ctx, inMemory) {
		if o.Admission == nil || !o.Admission.Context {
			t.Fatalf("%s: context not admitted: %+v", o.Ref(), o.Admission)
		}
	}
	if ns := admit.KeptNamespaces(ctx)[ctx[1]]; ns == nil || ns.Labels["team"] != "a" || ctx[1].HasContent() {
		t.Errorf("Namespace copy: kept %v, content held %v", ns, ctx[1].HasContent())
	}
	s.Admit(inMemory)
	if !inMemory.Admission.Context {
		t.Error("the context object judged was admitted again")
	}
	again := parse(t, src)[0]
	s.Admit(again)
	want, _ := ctx[0].Content()
	got, _ := again.Content()
	if !again.Admission.Context || !again.Admission.Judged || got["metadata"].(map[string]any)["uid"] != want["metadata"].(map[string]any)["uid"] {
		t.Errorf("the StorageClass read again: %+v, content %v", again.Admission, got)
	}
}

// TestMutations: what mutating admission does to an object is on its
// Admission; a policy's problems are on the policy's.
func TestMutations(t *testing.T) {
	data, err := os.ReadFile("../mutate/testdata/harden.yaml")
	if err != nil {
		t.Fatal(err)
	}
	objs := parse(t, string(data))
	var ctx, pods []*manifest.Object
	for _, o := range objs {
		if o.Kind == "Pod" {
			pods = append(pods, o)
		} else {
			ctx = append(ctx, o)
		}
	}
	s := stage.New(ctx, nil, opts)
	for _, o := range pods {
		s.Admit(o)
	}
	if got := rulesOf(pods[0].Admission.Mutations); !slices.Equal(got, []string{mutate.RuleApplied}) || pods[0].Admission.Context {
		t.Errorf("pod in shop: mutations %v", got)
	}
	if got := rulesOf(pods[1].Admission.Mutations); len(got) != 0 {
		t.Errorf("pod in legacy: mutations %v, want none", got)
	}
}
