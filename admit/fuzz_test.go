package admit

import (
	"testing"

	"github.com/kilnhq/kiln/manifest"
)

// FuzzAdmit: whatever the manifest, admission returns (it never panics and
// never hangs); a rejected object keeps a usable content.
func FuzzAdmit(f *testing.F) {
	f.Add(deploy)
	f.Add("apiVersion: v1\nkind: Pod\nmetadata: {generateName: x-}\nspec: {hostNetwork: true, containers: [{name: a, image: b, ports: [{containerPort: 80}]}]}\n")
	f.Add("apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata: {name: j}\nspec: {replicatedJobs: [{name: w, template: {spec: {template: {spec: {restartPolicy: Never, containers: [{name: c, image: i}]}}}}}]}\n")
	f.Add("apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata: {name: p}\nspec: {validations: [{expression: 'object.x ==' }]}\n")
	f.Add("apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: gizmos.example.com}\nspec: {group: example.com, names: {kind: Gizmo, plural: gizmos}, scope: Namespaced, versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}]}\n---\napiVersion: example.com/v1\nkind: Gizmo\nmetadata: {name: g}\nspec: {a: 1}\n")
	f.Fuzz(func(t *testing.T, in string) {
		objs, _ := manifest.Parse("fuzz.yaml", []byte(in))
		if len(objs) == 0 {
			return
		}
		kinds := manifest.BuiltinKinds()
		kinds.AddCRDs(objs)
		a := New(objs, kinds, Options{KubeVersion: manifest.LatestKube})
		for _, o := range objs {
			r := a.Admit(o)
			if r.Rejected && len(r.Problems) == 0 && r.Judged {
				t.Errorf("%s rejected without a problem", o.Ref())
			}
		}
	})
}
