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

	"github.com/kilnhq/kiln/admit/catalog"
	"github.com/kilnhq/kiln/manifest"
)

var execCommand = exec.Command

// serverVerdict classifies a response.
func serverVerdict(code int, body []byte, warnings []string) verdict {
	v := verdict{detail: fmt.Sprintf("%d %s", code, status(body))}
	for _, w := range warnings {
		switch {
		case strings.Contains(w, "PodSecurity"):
			v.psaWarn = true
		case strings.Contains(w, "ValidatingAdmissionPolicy"):
			v.polWarn = true
		default:
			v.warn = true
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
// templates, from the manifest as read (raw).
func podsFrom(o *manifest.Object, raw map[string]any) [][]byte {
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

// withClaimVolumes gives a StatefulSet's Pod the volumes its controller
// gives it for the volumeClaimTemplates: each replaces the template's
// volume of the same name, or is added.
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
		name, _ := manifest.ValueAt(t, "metadata.name").(string)
		claim := map[string]any{"name": name, "persistentVolumeClaim": map[string]any{"claimName": name + "-0"}}
		replaced := false
		for i, v := range vols {
			if n, _ := manifest.ValueAt(v, "name").(string); n == name {
				vols[i], replaced = claim, true
			}
		}
		if !replaced {
			vols = append(vols, claim)
		}
	}
	out["volumes"] = vols
	return out
}

// installShippedCRDs creates the CRDs of the kinds App specs compile to
// that the corpus does not define: JobSet v1alpha2 (kiln ships it: the
// cluster kiln assumes runs JobSet), and, for a corpus with HTTPRoutes,
// Gateway API's HTTPRoute from kiln's catalog (its default version, the
// one kiln lint judges HTTPRoutes by when the input holds no CRD).
func installShippedCRDs(t *testing.T, s *apiServer, objs []*judged) {
	defined, used := map[string]bool{}, map[string]bool{}
	for _, j := range objs {
		if j.obj.Kind == "CustomResourceDefinition" {
			defined[j.obj.Name] = true
		}
		used[j.obj.Group()+"/"+j.obj.Kind] = true
	}
	if !defined["jobsets.jobset.x-k8s.io"] {
		data, err := os.ReadFile("../crds/jobset.x-k8s.io_jobsets.json")
		if err != nil {
			t.Fatal(err)
		}
		createCRD(t, s, "jobsets.jobset.x-k8s.io", data)
	}
	if used["gateway.networking.k8s.io/HTTPRoute"] && !defined["httproutes.gateway.networking.k8s.io"] {
		ix, err := catalog.Load()
		if err != nil {
			t.Fatal(err)
		}
		c, ok := ix.Choose("gateway.networking.k8s.io", "HTTPRoute", nil)
		if !ok {
			t.Fatal("kiln's catalog has no HTTPRoute CRD")
		}
		data, err := c.JSON()
		if err != nil {
			t.Fatal(err)
		}
		createCRD(t, s, c.Name(), data)
	}
}

// createCRD creates a CRD and waits until it is established.
func createCRD(t *testing.T, s *apiServer, name string, data []byte) {
	if code, body, _, err := s.do("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", data); err != nil || code != 201 {
		t.Fatalf("CRD %s: %d %s %v", name, code, status(body), err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		_, body, _, _ := s.do("GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"+name, nil)
		if strings.Contains(string(body), `"type":"Established","status":"True"`) {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("the CRD %s never became established", name)
}

// waitForContext waits for the CRDs created whose custom resources are
// among the objects to send to be established and served, and for policies
// to take effect (a policy acts once its informers synced).
func waitForContext(t *testing.T, s *apiServer, created, objs []*judged, disc *discovery) {
	t.Helper()
	used := map[[2]string]bool{}
	for _, j := range objs {
		used[[2]string{j.obj.APIVersion, j.obj.Kind}] = true
	}
	deadline := time.Now().Add(60 * time.Second)
	var wanted [][2]string
	hasPolicy := false
	for _, j := range created {
		o := j.obj
		if o.Kind == "ValidatingAdmissionPolicyBinding" {
			hasPolicy = true
		}
		var kinds [][2]string
		for _, gvk := range crdKinds(j.raw) {
			if used[gvk] {
				kinds = append(kinds, gvk)
			}
		}
		if len(kinds) == 0 {
			continue
		}
		wanted = append(wanted, kinds...)
		for time.Now().Before(deadline) {
			code, body, _, _ := s.do("GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"+o.Name, nil)
			if code != 200 || strings.Contains(string(body), `"type":"Established","status":"True"`) {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	disc.forget()
	// Discovery lists a CRD's kinds shortly after it is established.
	for _, gvk := range wanted {
		for !disc.servedGVK(gvk[0], gvk[1]) && time.Now().Before(deadline) {
			time.Sleep(200 * time.Millisecond)
			disc.forget()
		}
	}
	if hasPolicy {
		probePolicies(t, s)
	}
}

// crdKinds lists the served group-versions and the kind of a CRD created
// for real (none for other objects).
func crdKinds(raw map[string]any) [][2]string {
	if raw["kind"] != "CustomResourceDefinition" {
		return nil
	}
	group, _ := manifest.ValueAt(raw, "spec.group").(string)
	kind, _ := manifest.ValueAt(raw, "spec.names.kind").(string)
	versions, _ := manifest.ValueAt(raw, "spec.versions").([]any)
	var out [][2]string
	for _, v := range versions {
		name, _ := manifest.ValueAt(v, "name").(string)
		if served, _ := manifest.ValueAt(v, "served").(bool); served && name != "" {
			out = append(out, [2]string{group + "/" + name, kind})
		}
	}
	return out
}
