// Package compiler turns App specs (apiVersion kiln.dev/v1alpha1, kind App;
// DESIGN §3) into Kubernetes objects: it validates a spec against the CUE
// schema in package schemas, checks what CUE cannot express, and emits a
// Namespace, PVCs, Services, Deployments and JobSets that are correct by
// construction. Every emitted node carries the position of the spec line
// that produced it, so findings on compiled objects point into the spec.
package compiler

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/kilnhq/kiln/manifest"
)

// Spec identity.
const (
	APIVersion = "kiln.dev/v1alpha1"
	Kind       = "App"
)

// App is a validated spec with its defaults filled in. The Go types mirror
// schemas/app.cue, which is the source of truth.
type App struct {
	Metadata Metadata `json:"metadata"`
	Spec     Spec     `json:"spec"`

	// Kube and JobSet are the parsed targets (defaults applied).
	Kube   manifest.KubeVersion `json:"-"`
	JobSet JobSetVersion        `json:"-"`
}

// JobSetVersion is a JobSet release, e.g. v0.10.
type JobSetVersion struct{ Major, Minor int }

// String formats the version as v0.10.
func (v JobSetVersion) String() string { return fmt.Sprintf("v%d.%d", v.Major, v.Minor) }

// Less reports whether v is older than w.
func (v JobSetVersion) Less(w JobSetVersion) bool {
	if v.Major != w.Major {
		return v.Major < w.Major
	}
	return v.Minor < w.Minor
}

// Metadata names the app and where its objects go.
type Metadata struct {
	Name        string            `json:"name"`
	Namespace   string            `json:"namespace"`
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
}

// Spec holds the five blocks of an App.
type Spec struct {
	Target    Target               `json:"target"`
	Namespace *NamespaceSpec       `json:"namespace"`
	Volumes   map[string]*Volume   `json:"volumes"`
	Services  map[string]*Service  `json:"services"`
	Training  map[string]*Training `json:"training"`
}

// Target gates features: the Kubernetes minor and the JobSet release.
type Target struct {
	Kubernetes string `json:"kubernetes"`
	JobSet     string `json:"jobset"`
}

// NamespaceSpec asks for a Namespace object.
type NamespaceSpec struct {
	Security *Security `json:"security"`
}

// Security is the Pod Security Admission labelling of the namespace.
type Security struct {
	Enforce string `json:"enforce"`
	Audit   string `json:"audit"`
	Warn    string `json:"warn"`
	Version string `json:"version"`
}

// Volume is exactly one of Scratch, Shared or Claim.
type Volume struct {
	Scratch *Scratch `json:"scratch"`
	Shared  *Shared  `json:"shared"`
	Claim   *Claim   `json:"claim"`
}

// Scratch is an emptyDir per pod.
type Scratch struct {
	Medium    string   `json:"medium"`
	SizeLimit Quantity `json:"sizeLimit"`
}

// Shared is a PVC kiln creates.
type Shared struct {
	Size         Quantity `json:"size"`
	StorageClass string   `json:"storageClass"`
	AccessMode   string   `json:"accessMode"`
}

// Claim refers to an existing PVC.
type Claim struct {
	Name     string `json:"name"`
	ReadOnly bool   `json:"readOnly"`
}

// Service compiles to a Deployment, plus a Service when Ports is set.
type Service struct {
	Replicas   int            `json:"replicas"`
	Ports      map[string]int `json:"ports"`
	Init       []*Container   `json:"init"`
	Sidecars   []*Container   `json:"sidecars"`
	Containers []*Container   `json:"containers"`
	Security   *PodSecurity   `json:"security"`
}

// Training compiles to a JobSet.
type Training struct {
	Framework        string            `json:"framework"`
	Nodes            int               `json:"nodes"`
	GPUsPerNode      int               `json:"gpusPerNode"`
	ParameterServers int               `json:"parameterServers"`
	Image            string            `json:"image"`
	Command          []string          `json:"command"`
	Args             []string          `json:"args"`
	Env              map[string]string `json:"env"`
	Mounts           map[string]string `json:"mounts"`
	Resources        *Resources        `json:"resources"`
	Port             int               `json:"port"`
	MaxRestarts      int               `json:"maxRestarts"`
	Init             []*Container      `json:"init"`
	Sidecars         []*Container      `json:"sidecars"`
	Security         *PodSecurity      `json:"security"`
}

// Container is an init container, a sidecar or an app container.
type Container struct {
	Name      string             `json:"name"`
	Image     string             `json:"image"`
	Command   []string           `json:"command"`
	Args      []string           `json:"args"`
	Env       map[string]string  `json:"env"`
	Mounts    map[string]string  `json:"mounts"`
	Resources *Resources         `json:"resources"`
	Security  *ContainerSecurity `json:"security"`
	Ports     map[string]int     `json:"ports"`
	Startup   *Probe             `json:"startup"`
	Ready     *Probe             `json:"ready"`
	Live      *Probe             `json:"live"`
}

// Probe has exactly one handler.
type Probe struct {
	HTTPGet             *HTTPGet   `json:"httpGet"`
	TCPSocket           *TCPSocket `json:"tcpSocket"`
	Exec                *Exec      `json:"exec"`
	GRPC                *GRPC      `json:"grpc"`
	InitialDelaySeconds *int       `json:"initialDelaySeconds"`
	PeriodSeconds       *int       `json:"periodSeconds"`
	TimeoutSeconds      *int       `json:"timeoutSeconds"`
	FailureThreshold    *int       `json:"failureThreshold"`
}

// HTTPGet probes an HTTP path.
type HTTPGet struct {
	Path   string `json:"path"`
	Port   Port   `json:"port"`
	Scheme string `json:"scheme"`
}

// TCPSocket probes a TCP port.
type TCPSocket struct {
	Port Port `json:"port"`
}

// Exec probes by running a command.
type Exec struct {
	Command []string `json:"command"`
}

// GRPC probes a gRPC health endpoint.
type GRPC struct {
	Port int `json:"port"`
}

// PodSecurity overrides the pod-level securityContext defaults.
type PodSecurity struct {
	RunAsNonRoot *bool `json:"runAsNonRoot"`
	RunAsUser    *int  `json:"runAsUser"`
	RunAsGroup   *int  `json:"runAsGroup"`
	FSGroup      *int  `json:"fsGroup"`
}

// ContainerSecurity overrides the container-level securityContext defaults.
type ContainerSecurity struct {
	RunAsUser                *int     `json:"runAsUser"`
	RunAsGroup               *int     `json:"runAsGroup"`
	ReadOnlyRootFilesystem   *bool    `json:"readOnlyRootFilesystem"`
	AllowPrivilegeEscalation *bool    `json:"allowPrivilegeEscalation"`
	AddCapabilities          []string `json:"addCapabilities"`
}

// Resources are a container's CPU and memory: cpu becomes a request, memory
// a request and an equal limit.
type Resources struct {
	CPU    Quantity `json:"cpu"`
	Memory Quantity `json:"memory"`
}

// Quantity is a Kubernetes quantity written as a number or a string.
type Quantity string

// UnmarshalJSON accepts a JSON number or string.
func (q *Quantity) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*q = Quantity(s)
		return nil
	}
	*q = Quantity(b)
	return nil
}

// Port is a port number or a port name.
type Port struct {
	Number int
	Name   string
}

// UnmarshalJSON accepts a JSON number or string.
func (p *Port) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		return json.Unmarshal(b, &p.Name)
	}
	n, err := strconv.Atoi(string(b))
	p.Number = n
	return err
}

// Defaults of schemas/app.cue, applied while decoding (json leaves absent
// fields as they were before decoding). TestDefaultsMatchSchema checks them
// against the schema.

// UnmarshalJSON decodes a service with replicas defaulting to 1.
func (s *Service) UnmarshalJSON(b []byte) error {
	type plain Service
	p := plain{Replicas: 1}
	err := json.Unmarshal(b, &p)
	*s = Service(p)
	return err
}

// UnmarshalJSON decodes a training job with nodes defaulting to 1 and port to 29500.
func (t *Training) UnmarshalJSON(b []byte) error {
	type plain Training
	p := plain{Nodes: 1, Port: 29500}
	err := json.Unmarshal(b, &p)
	*t = Training(p)
	return err
}

// UnmarshalJSON decodes a shared volume with accessMode defaulting to ReadWriteMany.
func (s *Shared) UnmarshalJSON(b []byte) error {
	type plain Shared
	p := plain{AccessMode: "ReadWriteMany"}
	err := json.Unmarshal(b, &p)
	*s = Shared(p)
	return err
}

// UnmarshalJSON decodes an httpGet probe with path defaulting to /.
func (h *HTTPGet) UnmarshalJSON(b []byte) error {
	type plain HTTPGet
	p := plain{Path: "/"}
	err := json.Unmarshal(b, &p)
	*h = HTTPGet(p)
	return err
}
