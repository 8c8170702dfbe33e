package main

// sources are the pinned upstream releases the catalog is built from, one
// row per project version. To bump a project, change its version (and
// module version) here and run `go generate ./catalog`.
//
// A module source is read from the module zip the Go module proxy serves
// (`go mod download -json MODULE@VERSION`); a local one from a copy of the
// project's repository at a pinned commit under the -shared directory
// (../shared/realworld), for projects whose module the proxy refuses.
// The first row of a project is its default version; later rows are
// versions a .kiln.yaml can pin (catalog.versions).
var sources = []source{
	// Flux v2.9.5, every controller, as the Flux Operator ships each release's
	// manifests (the proxy refuses the controllers' own modules).
	{Project: "flux", Version: "v2.9.5", Module: "github.com/controlplaneio-fluxcd/flux-operator", ModuleVersion: "v0.59.0",
		Paths: []string{"config/data/flux/v2.9.5/*.yaml"}},
	{Project: "flux", Version: "v2.8.8", Module: "github.com/controlplaneio-fluxcd/flux-operator", ModuleVersion: "v0.59.0",
		Paths: []string{"config/data/flux/v2.8.8/*.yaml"}},
	{Project: "flux", Version: "v2.7.5", Module: "github.com/controlplaneio-fluxcd/flux-operator", ModuleVersion: "v0.59.0",
		Paths: []string{"config/data/flux/v2.7.5/*.yaml"}},
	{Project: "flux-operator", Version: "v0.59.0", Module: "github.com/controlplaneio-fluxcd/flux-operator", ModuleVersion: "v0.59.0",
		Paths: []string{"config/crd/bases/*.yaml"}},
	{Project: "flagger", Version: "v1.36.1", Module: "github.com/fluxcd/flagger", ModuleVersion: "v1.36.1",
		Paths: []string{"artifacts/flagger/crd.yaml"}},
	{Project: "gateway-api", Version: "v1.7.0", Module: "sigs.k8s.io/gateway-api", ModuleVersion: "v1.7.0",
		Paths: []string{"config/crd/standard/*.yaml"}},
	{Project: "gateway-api", Version: "v1.7.0-experimental", Module: "sigs.k8s.io/gateway-api", ModuleVersion: "v1.7.0",
		Paths: []string{"config/crd/experimental/*.yaml"}},
	{Project: "cert-manager", Version: "v1.21.2", Module: "github.com/cert-manager/cert-manager", ModuleVersion: "v1.21.2",
		Paths: []string{"deploy/crds/*.yaml"}},
	{Project: "prometheus-operator", Version: "v0.85.0", Module: "github.com/prometheus-operator/prometheus-operator", ModuleVersion: "v0.85.0",
		Paths: []string{"example/prometheus-operator-crd-full/*.yaml"}},
	{Project: "external-secrets", Version: "v1.3.2", Module: "github.com/external-secrets/external-secrets", ModuleVersion: "v1.3.2",
		Paths: []string{"config/crds/bases/*.yaml"}},
	{Project: "argo-cd", Version: "v3.6.2", Module: "github.com/argoproj/argo-cd/v3", ModuleVersion: "v3.6.2",
		Paths: []string{"manifests/crds/*-crd.yaml"}},
	{Project: "argo-rollouts", Version: "v1.10.2", Module: "github.com/argoproj/argo-rollouts", ModuleVersion: "v1.10.2",
		Paths: []string{"manifests/crds/*-crd.yaml"}},
	{Project: "argo-workflows", Version: "v4.0.5", Module: "github.com/argoproj/argo-workflows/v4", ModuleVersion: "v4.0.5",
		Paths: []string{"manifests/base/crds/full/argoproj.io_*.yaml"}},
	{Project: "kyverno", Version: "v1.19.1", Module: "github.com/kyverno/kyverno", ModuleVersion: "v1.19.1",
		Paths: []string{"config/crds/*/*.yaml"}},
	{Project: "istio", Version: "v1.32.0", Module: "istio.io/api", ModuleVersion: "v1.32.0",
		Paths: []string{"kubernetes/customresourcedefinitions.gen.yaml"}},
	{Project: "cilium", Version: "v1.20.2", Module: "github.com/cilium/cilium", ModuleVersion: "v1.20.2",
		Paths: []string{"pkg/k8s/apis/cilium.io/client/crds/*/*.yaml"}},
	{Project: "keda", Version: "v2.21.1", Module: "github.com/kedacore/keda/v2", ModuleVersion: "v2.21.1",
		Paths: []string{"config/crd/bases/*.yaml"}},
	{Project: "velero", Version: "v1.18.3", Module: "github.com/vmware-tanzu/velero", ModuleVersion: "v1.18.3",
		Paths: []string{"config/crd/v1/bases/*.yaml", "config/crd/v2alpha1/bases/*.yaml"}},
	{Project: "external-snapshotter", Version: "v8.7.0", Module: "github.com/kubernetes-csi/external-snapshotter/client/v8", ModuleVersion: "v8.7.0",
		Paths: []string{"config/crd/*snapshot*.yaml"}},
	{Project: "traefik", Version: "v3.7.13", Module: "github.com/traefik/traefik/v3", ModuleVersion: "v3.7.13",
		Paths: []string{"docs/content/reference/dynamic-configuration/kubernetes-crd-definition-v1.yml"}},
	{Project: "sealed-secrets", Version: "v0.40.0", Module: "github.com/bitnami-labs/sealed-secrets", ModuleVersion: "v0.40.0",
		Paths: []string{"helm/sealed-secrets/crds/*.yaml"}},
	{Project: "external-dns", Version: "v0.23.0", Module: "sigs.k8s.io/external-dns", ModuleVersion: "v0.23.0",
		Paths: []string{"config/crd/standard/*.yaml"}},
	// Envoy Gateway's chart bundles Gateway API too: only its own group.
	{Project: "envoy-gateway", Version: "v1.9.1", Module: "github.com/envoyproxy/gateway", ModuleVersion: "v1.9.1",
		Paths: []string{"charts/gateway-helm/charts/crds/crds/generated/*.yaml"}, Groups: []string{"gateway.envoyproxy.io"}},
	{Project: "kueue", Version: "v0.17.0", Module: "sigs.k8s.io/kueue", ModuleVersion: "v0.17.0",
		Paths: []string{"config/components/crd/bases/*.yaml"}},
	{Project: "knative-serving", Version: "v0.51.0", Module: "knative.dev/serving", ModuleVersion: "v0.51.0",
		Paths: []string{"config/core/300-resources/*.yaml", "config/core/300-knativecertificate.yaml"}},
	// Copies in ../shared/realworld at the commits its README lists.
	{Project: "jobset", Version: "08dfbdfd6827", Local: "realworld/jobset", Repo: "github.com/kubernetes-sigs/jobset",
		Paths: []string{"config/components/crd/bases/*.yaml"}},
	{Project: "tekton-pipeline", Version: "3ee1745ae5b2", Local: "realworld/tekton-pipeline", Repo: "github.com/tektoncd/pipeline",
		Paths: []string{"config/300-crds/*.yaml"}},
	{Project: "opentelemetry-operator", Version: "dd5665c06f37", Local: "realworld/opentelemetry", Repo: "github.com/open-telemetry/opentelemetry-helm-charts",
		// The chart's CRD templates, without the conversion webhook (which no
		// offline server can call) and with every CRD the chart can install.
		Paths: []string{"charts/opentelemetry-operator/conf/crds/*.yaml"}, Template: map[string]bool{
			".Values.crds.create": true, ".Values.admissionWebhooks.create": false, ".Values.crds.annotations": false,
			`get .Values.manager.featureGatesMap "operator.clusterobservability"`: true}},
}

// unavailable are projects the catalog should hold but has no offline
// source for: `kiln crds list` says so rather than pretend.
var unavailable = []missing{
	{Project: "grafana-operator", Groups: []string{"grafana.integreatly.org"}, Why: "the Go module proxy refuses github.com/grafana/grafana-operator/v5 and no copy is pinned"},
	{Project: "cloudnative-pg", Groups: []string{"postgresql.cnpg.io"}, Why: "the Go module proxy refuses github.com/cloudnative-pg/cloudnative-pg and no copy is pinned"},
	{Project: "multus", Groups: []string{"k8s.cni.cncf.io"}, Why: "the Go module proxy refuses multus-cni and no copy is pinned"},
	{Project: "knative-eventing", Groups: []string{"eventing.knative.dev", "messaging.knative.dev", "sources.knative.dev", "flows.knative.dev"}, Why: "the Go module proxy refuses knative.dev/eventing and no copy is pinned"},
}
