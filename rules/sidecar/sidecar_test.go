package sidecar

import (
	"testing"

	_ "github.com/kilnhq/kiln/internal/golden"
)

func TestKnownHelper(t *testing.T) {
	for _, tc := range []struct{ image, want string }{
		{"envoyproxy/envoy:v1.31.0", "Envoy proxy"},
		{"docker.io/envoyproxy/envoy-distroless:v1.31-latest", "Envoy proxy"},
		{"docker.io/istio/proxyv2:1.22.0", "Istio proxy"},
		{"cr.l5d.io/linkerd/proxy:edge-24.1.1", "Linkerd proxy"},
		{"gcr.io/cloud-sql-connectors/cloud-sql-proxy:2.11.0", "Cloud SQL Auth Proxy"},
		{"gcr.io/cloudsql-docker/gce-proxy:1.33", "Cloud SQL Auth Proxy"},
		{"fluent/fluent-bit:3.1@sha256:abcd", "Fluent Bit"},
		{"FLUENT/FLUENTD:v1.17", "Fluentd"},
		{"timberio/vector:0.39.0-debian", "Vector"},
		{"otel/opentelemetry-collector-contrib:0.104.0", "OpenTelemetry Collector"},
		{"ghcr.io/open-telemetry/opentelemetry-collector-releases/otelcol-k8s:0.104.0", "OpenTelemetry Collector"},
		{"hashicorp/vault:1.17", "Vault Agent"},
		{"gcr.io/datadoghq/agent:7", "Datadog Agent"},
		{"localhost:5000/envoy", "Envoy proxy"},
		{"quay.io/brancz/kube-rbac-proxy:v0.18.0", "kube-rbac-proxy"},
		{"registry.k8s.io/kubebuilder/kube-rbac-proxy:v0.16.0", "kube-rbac-proxy"},
		{"quay.io/prometheus-operator/prometheus-config-reloader:v0.75.0", "Prometheus config reloader"},
		{"ghcr.io/jimmidyson/configmap-reload:v0.13.1", "configmap-reload"},
		{"quay.io/kiwigrid/k8s-sidecar:1.27.4", "k8s-sidecar (kiwigrid, ConfigMap/Secret watcher)"},
		{"ghcr.io/acme/k8s-sidecar:1.0", ""},
		// Generic last segments are not trusted on their own.
		{"ghcr.io/acme/proxy:1.0", ""},
		{"ghcr.io/acme/agent:1.0", ""},
		{"ghcr.io/acme/vector:1.0", ""},
		{"ghcr.io/acme/vault:1.0", ""},
		{"ghcr.io/acme/envoy-config-builder:1.0", ""},
		{"localhost:5000/web", ""},
		{"", ""},
	} {
		if got := KnownHelper(tc.image); got != tc.want {
			t.Errorf("KnownHelper(%q) = %q, want %q", tc.image, got, tc.want)
		}
	}
}
