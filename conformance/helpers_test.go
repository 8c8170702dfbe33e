package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules"
)

type schemaGVKType = schema.GroupVersionKind

var execCommand = exec.Command

// kilnVerdict is kiln's answer for one object and for the Pods made from
// its templates.
type kilnVerdict struct {
	verdict
	psaDenied bool
	psaDetail string
}

// kilnVerdicts classifies kiln's findings per object the way the server
// answers: refused before admission (the object is Refused: schema/… or a
// version not served), denied by admission (a Pod's psa/… error or a user
// policy's Deny), warned (psa/… warnings for a Pod; any psa/… finding of a
// workload, which the server reports as warnings on the workload).
func kilnVerdicts(objs []*manifest.Object, res *rules.Result) map[*manifest.Object]kilnVerdict {
	byRef := map[manifest.Ref][]rules.Finding{}
	for _, f := range res.Findings {
		if f.Suppressed == nil {
			byRef[f.Object] = append(byRef[f.Object], f)
		}
	}
	out := map[*manifest.Object]kilnVerdict{}
	for _, o := range objs {
		var v kilnVerdict
		v.rejected = o.Refused
		isPod := o.Kind == "Pod" && o.Group() == ""
		var details []string
		for _, f := range byRef[o.Ref()] {
			if f.Pos.File != o.File && !strings.HasPrefix(f.Rule, "policy/") {
				continue
			}
			psa := strings.HasPrefix(f.Rule, "psa/") && f.Rule != "psa/invalid-label"
			userPolicy := strings.HasPrefix(f.Rule, "policy/") && f.Rule != "policy/unknown-kind"
			switch {
			case psa && f.Severity == rules.Error:
				if isPod {
					v.denied = true
				} else {
					v.psaDenied = true
					v.psaWarn = true
					v.psaDetail += f.Rule + " "
				}
			case psa:
				v.psaWarn = true
			case userPolicy && f.Severity == rules.Error:
				v.denied = true
			case userPolicy && f.Severity == rules.Warning:
				v.polWarn = true
			}
			if strings.HasPrefix(f.Rule, "schema/") || strings.HasPrefix(f.Rule, "api/") || psa || userPolicy {
				details = append(details, fmt.Sprintf("%s %s: %s", f.Severity, f.Rule, f.Message))
			}
		}
		if isPod && v.denied {
			v.psaWarn = false // a Pod denied by enforce carries no warnings
		}
		v.detail = strings.Join(details, " | ")
		if v.detail == "" {
			v.detail = "(no finding)"
		}
		out[o] = v
	}
	return out
}

// serverVerdict classifies a response.
func serverVerdict(code int, body []byte, warnings []string) verdict {
	v := verdict{detail: fmt.Sprintf("%d %s", code, status(body))}
	for _, w := range warnings {
		if strings.Contains(w, "PodSecurity") {
			v.psaWarn = true
		} else if strings.Contains(w, "ValidatingAdmissionPolicy") {
			v.polWarn = true
		}
		v.detail += " | warning: " + w
	}
	switch {
	case code == 200 || code == 201 || code == 409:
	case code == 403 && strings.Contains(string(body), "PodSecurity"):
		v.denied = true
	case (code == 403 || code == 422) && strings.Contains(string(body), "ValidatingAdmissionPolicy") && strings.Contains(string(body), "denied request"):
		// A policy's Deny: 422 Invalid in 1.37 (403 before).
		v.denied = true
	default:
		v.rejected = true
	}
	return v
}

// podsFrom makes the Pods a controller would create from an object's pod
// templates, from the manifest as written.
func podsFrom(o *manifest.Object) [][]byte {
	body, err := o.Content()
	_ = body
	if err != nil {
		return nil
	}
	raw := rawOf(o)
	if raw == nil {
		return nil
	}
	var out [][]byte
	for i, t := range manifest.PodTemplatesOf(o) {
		meta, _ := manifest.ValueAt(raw, t.MetadataPath()).(map[string]any)
		spec, _ := manifest.ValueAt(raw, t.SpecPath()).(map[string]any)
		if spec == nil {
			continue
		}
		m := map[string]any{}
		for _, k := range []string{"labels", "annotations"} {
			if v, ok := meta[k]; ok {
				m[k] = v
			}
		}
		m["name"] = fmt.Sprintf("kiln-conformance-%d", i)
		if o.Kind == "StatefulSet" {
			spec = withClaimVolumes(raw, spec)
		}
		pod := map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": m, "spec": spec}
		b, _ := json.Marshal(pod)
		out = append(out, b)
	}
	return out
}

// rawContent keeps the manifest as read, before admission replaced it.
var rawContent = map[*manifest.Object]map[string]any{}

func rawOf(o *manifest.Object) map[string]any { return rawContent[o] }

func (s *apiServer) doPatch(path string, body []byte) (int, []byte, []string, error) {
	req, err := http.NewRequest("PATCH", s.url+path, bytes.NewReader(body))
	if err != nil {
		return 0, nil, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+s.token)
	req.Header.Set("Content-Type", "application/merge-patch+json")
	resp, err := s.client.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b, nil, nil
}

// probePolicies waits until a sentinel Deny policy takes effect: a new
// policy acts only after its informers synced.
func probePolicies(t *testing.T, s *apiServer) {
	pol := `{"apiVersion":"admissionregistration.k8s.io/v1","kind":"ValidatingAdmissionPolicy","metadata":{"name":"kiln-sentinel"},"spec":{"failurePolicy":"Fail","matchConstraints":{"resourceRules":[{"apiGroups":[""],"apiVersions":["v1"],"operations":["CREATE"],"resources":["configmaps"]}]},"validations":[{"expression":"object.metadata.name != 'kiln-sentinel-probe'"}]}}`
	bind := `{"apiVersion":"admissionregistration.k8s.io/v1","kind":"ValidatingAdmissionPolicyBinding","metadata":{"name":"kiln-sentinel"},"spec":{"policyName":"kiln-sentinel","validationActions":["Deny"]}}`
	for _, b := range []struct{ path, body string }{
		{"/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies", pol},
		{"/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings", bind},
	} {
		if code, body, _, err := s.do("POST", b.path, []byte(b.body)); err != nil || code != 201 {
			t.Fatalf("sentinel policy: %d %s %v", code, status(body), err)
		}
	}
	probe := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"kiln-sentinel-probe"}}`
	deadline := time.Now().Add(30 * time.Second)
	var last string
	for time.Now().Before(deadline) {
		code, body, _, _ := s.do("POST", "/api/v1/namespaces/default/configmaps?dryRun=All", []byte(probe))
		if code == 403 || (code == 422 && strings.Contains(string(body), "kiln-sentinel")) {
			time.Sleep(2 * time.Second) // param informers take a few seconds more
			return
		}
		last = fmt.Sprintf("%d %s", code, status(body))
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("the sentinel policy never took effect (last answer: %s)", last)
}

// knownDifferences names each disagreement kiln accepts, keyed
// "<corpus> <Kind/namespace/name> <what>", with the reason.
var knownDifferences = map[string]string{}

// withClaimVolumes adds the volumes a StatefulSet controller adds to its
// Pods for the volumeClaimTemplates.
func withClaimVolumes(raw, spec map[string]any) map[string]any {
	tmpls, _ := manifest.ValueAt(raw, "spec.volumeClaimTemplates").([]any)
	if len(tmpls) == 0 {
		return spec
	}
	out := map[string]any{}
	for k, v := range spec {
		out[k] = v
	}
	vols, _ := out["volumes"].([]any)
	vols = append([]any(nil), vols...)
	for _, t := range tmpls {
		name, _ := manifest.ValueAt(t.(map[string]any), "metadata.name").(string)
		vols = append(vols, map[string]any{"name": name, "persistentVolumeClaim": map[string]any{"claimName": name + "-0"}})
	}
	out["volumes"] = vols
	return out
}

// installShippedCRDs creates the CRDs kiln ships (JobSet v1alpha2) that the
// corpus does not define: the cluster kiln assumes runs JobSet.
func installShippedCRDs(t *testing.T, s *apiServer, objs []*manifest.Object) {
	for _, o := range objs {
		if o.Kind == "CustomResourceDefinition" && o.Name == "jobsets.jobset.x-k8s.io" {
			return
		}
	}
	data, err := os.ReadFile("../admit/crds/jobset.x-k8s.io_jobsets.json")
	if err != nil {
		t.Fatal(err)
	}
	if code, body, _, err := s.do("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", data); err != nil || code != 201 {
		t.Fatalf("JobSet CRD: %d %s %v", code, status(body), err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		_, body, _, _ := s.do("GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/jobsets.jobset.x-k8s.io", nil)
		if strings.Contains(string(body), `"type":"Established","status":"True"`) {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatal("the JobSet CRD never became established")
}
