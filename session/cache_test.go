package session

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// cacheTree is a tree that exercises every kind of state a judge keeps:
// plain files, a kustomize build and a Helm chart (rendered objects), a
// Namespace with Pod Security labels, a CRD and its custom resources, a
// kind without CRD (noted once per kind), duplicates and claims (checkers
// that relate objects), kiln.dev/ignore entries used and unused, a file
// that does not parse, and a user's policy beside the tree.
var cacheTree = map[string]string{
	"ns.yaml": `apiVersion: v1
kind: Namespace
metadata:
  name: shop
  labels:
    pod-security.kubernetes.io/enforce: baseline
`,
	"deploy.yaml": `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
  annotations:
    kiln.dev/ignore: psa/runAsNonRoot,storage/unused # reason
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: nginx:1.27
        securityContext: {privileged: true}
        volumeMounts: [{name: data, mountPath: /data}]
      volumes:
      - name: data
        persistentVolumeClaim: {claimName: data}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data, namespace: shop}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web2, namespace: shop}
spec:
  replicas: 2
  selector: {matchLabels: {app: web2}}
  template:
    metadata: {labels: {app: web2}}
    spec:
      containers: [{name: web, image: nginx:1.27, volumeMounts: [{name: data, mountPath: /data}]}]
      volumes: [{name: data, persistentVolumeClaim: {claimName: data}}]
`,
	"crd.yaml": `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  names: {kind: Widget, plural: widgets, singular: widget, listKind: WidgetList}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer, maximum: 10}
`,
	"widgets.yaml": `apiVersion: example.com/v1
kind: Widget
metadata: {name: big, namespace: shop}
spec: {size: 12}
---
apiVersion: example.com/v1
kind: Gadget
metadata: {name: g1, namespace: shop}
---
apiVersion: example.com/v1
kind: Gadget
metadata: {name: g2, namespace: shop}
`,
	"dup.yaml": `apiVersion: v1
kind: ConfigMap
metadata: {name: cfg, namespace: shop, labels: {team: a}}
data: {mode: "0755"}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: cfg, namespace: shop}
data: {mode: on}
`,
	// Copies the same once defaulted: the checker that relates them must
	// see them admitted, on a run that remembers them too.
	"copies.yaml": `apiVersion: apps/v1
kind: Deployment
metadata: {name: api, namespace: shop}
spec:
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec: {containers: [{name: api, image: api:1}]}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: api, namespace: shop}
spec:
  replicas: 1
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec: {containers: [{name: api, image: api:1}]}
`,
	"broken.yaml":              "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: [unclosed\n",
	"app/kustomization.yaml":   "namespace: shop\nresources: [job.yaml]\n",
	"app/job.yaml":             "apiVersion: batch/v1\nkind: Job\nmetadata: {name: once}\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n      hostNetwork: true\n      containers: [{name: c, image: busybox, securityContext: {runAsUser: 0}}]\n",
	"chart/Chart.yaml":         "apiVersion: v2\nname: demo\nversion: 0.1.0\n",
	"chart/values.yaml":        "replicas: 1\n",
	"chart/templates/cm.yaml":  "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-cfg\n  labels: {team: b}\ndata:\n  replicas: {{ .Values.replicas | quote }}\n",
	"../policy/no-team-b.yaml": noTeamB,
}

const noTeamB = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: no-team-b}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules: [{apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [configmaps]}]
  validations:
  - expression: "!has(object.metadata.labels) || !('team' in object.metadata.labels) || object.metadata.labels.team != 'b'"
    message: team b may not make ConfigMaps
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: no-team-b}
spec: {policyName: no-team-b, validationActions: [Deny]}
`

// writeTree writes files under dir.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCacheKeepsReports lints cacheTree with and without the content cache
// and changes each part of the key in turn: every run's report must be the
// one a run without cache gives, a run over unchanged input must judge
// nothing afresh, and each change must make the batches that depend on it
// miss.
func TestCacheKeepsReports(t *testing.T) {
	root := t.TempDir()
	tree := filepath.Join(root, "tree")
	writeTree(t, tree, cacheTree)
	cache := filepath.Join(root, "cache")
	t.Chdir(tree)
	policy := filepath.Join(root, "policy")

	// compare lints with the cache and without, and returns the cache's counts.
	compare := func(t *testing.T, flags map[string]string) (gets, hits, puts int64) {
		t.Helper()
		with := map[string]string{"cache-dir": cache, "policy": policy}
		without := map[string]string{"no-cache": "true", "policy": policy}
		for k, v := range flags {
			with[k], without[k] = v, v
		}
		fresh := mustLint(t, nil, without)
		if fresh.out.Cache != nil {
			t.Fatal("--no-cache used a cache")
		}
		cached := mustLint(t, nil, with)
		if cached.json != fresh.json {
			t.Fatalf("the report with the cache differs from the one without:\n%s", firstDiff(cached.json, fresh.json))
		}
		if (cached.verdict == nil) != (fresh.verdict == nil) {
			t.Fatalf("verdict with the cache %v, without %v", cached.verdict, fresh.verdict)
		}
		st := cached.out.Cache
		return st.Gets, st.Hits, st.Puts
	}

	gets, hits, puts := compare(t, nil)
	if hits != 0 || puts == 0 || puts != gets {
		t.Fatalf("cold run: %d asked, %d held, %d stored; want every batch stored", gets, hits, puts)
	}
	batches := gets
	if gets, hits, puts = compare(t, nil); hits != batches || gets != batches || puts != 0 {
		t.Fatalf("warm run: %d asked, %d held, %d stored; want all %d held", gets, hits, puts, batches)
	}
	report := mustLint(t, nil, map[string]string{"cache-dir": cache, "policy": policy}).json
	for _, want := range []string{`"rule": "psa/privileged"`, `"rule": "object/duplicate"`, `"rule": "schema/no-crd"`,
		`"rule": "kiln/unused-ignore"`, `"file": "broken.yaml"`, `team b may not`, `"rule": "schema/invalid"`, `"rule": "storage/rwo-shared"`, `"rule": "psa/hostNamespaces"`, `the copies are identical`, `app/job.yaml`, `chart/templates/cm.yaml`} {
		if !strings.Contains(report, want) {
			t.Errorf("the report has no %s: the tree does not test it", want)
		}
	}

	steps := []struct {
		name  string
		edit  func(t *testing.T)
		flags map[string]string
		// most is the most batches that may be held afterwards.
		most int64
	}{
		{name: "content of one file", edit: func(t *testing.T) {
			editFile(t, "dup.yaml", func(s string) string { return strings.Replace(s, "mode: on", "mode: off", 1) })
		}, most: batches - 1},
		{name: "a setting", flags: map[string]string{"psa-level": "baseline"}, most: 0},
		{name: "a rule's setting", edit: func(t *testing.T) {
			writeTree(t, ".", map[string]string{".kiln.yaml": "rules:\n  object/duplicate: warning\n"})
		}, most: 0},
		{name: "a Namespace's label", edit: func(t *testing.T) {
			editFile(t, "ns.yaml", func(s string) string { return strings.Replace(s, "enforce: baseline", "enforce: restricted", 1) })
		}, most: 0},
		{name: "a policy", edit: func(t *testing.T) {
			editFile(t, filepath.Join(policy, "no-team-b.yaml"), func(s string) string { return strings.ReplaceAll(s, "'b'", "'a'") })
		}, most: 0},
		{name: "a CRD", edit: func(t *testing.T) {
			editFile(t, "crd.yaml", func(s string) string { return strings.Replace(s, "maximum: 10", "maximum: 20", 1) })
		}, most: 0},
		{name: "a chart's values", edit: func(t *testing.T) {
			editFile(t, "chart/values.yaml", func(s string) string { return strings.Replace(s, "1", "3", 1) })
		}, most: batches - 1},
	}
	for _, step := range steps {
		t.Run(step.name, func(t *testing.T) {
			if step.edit != nil {
				step.edit(t)
			}
			gets, hits, _ := compare(t, step.flags)
			if hits > step.most {
				t.Errorf("%d of %d batches held after changing %s; want at most %d", hits, gets, step.name, step.most)
			}
			if gets, hits, _ = compare(t, step.flags); hits != gets {
				t.Errorf("run again unchanged: %d of %d batches held", hits, gets)
			}
		})
	}
}

// TestCacheDamagedAndShared: entries cut short or overwritten are misses
// (the report stays the one without cache), and runs that share one cache
// directory at the same time each give that report.
func TestCacheDamagedAndShared(t *testing.T) {
	root := t.TempDir()
	tree := filepath.Join(root, "tree")
	writeTree(t, tree, cacheTree)
	cache := filepath.Join(root, "cache")
	policy := filepath.Join(root, "policy")
	t.Chdir(tree)
	flags := map[string]string{"cache-dir": cache, "policy": policy}
	want := mustLint(t, nil, map[string]string{"no-cache": "true", "policy": policy}).json

	const runs = 4
	var wg sync.WaitGroup
	got := make([]string, runs)
	for i := range runs {
		wg.Go(func() {
			r, err := lintWith(t, nil, flags)
			if err != nil {
				t.Error(err)
				return
			}
			got[i] = r.json
		})
	}
	wg.Wait()
	for i, g := range got {
		if g != want {
			t.Fatalf("concurrent run %d differs from a run without cache:\n%s", i, firstDiff(g, want))
		}
	}

	var entries []string
	filepath.WalkDir(cache, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			entries = append(entries, p)
		}
		return nil
	})
	if len(entries) == 0 {
		t.Fatal("the runs wrote no cache entry")
	}
	for i, p := range entries {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		switch i % 3 {
		case 0:
			data = data[:len(data)/2] // torn
		case 1:
			data[len(data)-2] ^= 0x20 // a flipped bit
		case 2:
			data = nil // empty
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := mustLint(t, nil, flags)
	if r.json != want {
		t.Fatalf("with damaged entries the report differs:\n%s", firstDiff(r.json, want))
	}
	if st := r.out.Cache; st.Hits != 0 || st.Puts != st.Gets {
		t.Errorf("damaged entries: %d of %d held, %d rewritten; want none held, all rewritten", st.Hits, st.Gets, st.Puts)
	}
	if r = mustLint(t, nil, flags); r.json != want || r.out.Cache.Hits != r.out.Cache.Gets {
		t.Errorf("after rewriting: %d of %d held", r.out.Cache.Hits, r.out.Cache.Gets)
	}
}
