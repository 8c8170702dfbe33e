// Package compiler turns App specs (apiVersion kiln.dev/v1alpha1, kind App;
// docs/design.md §3) into Kubernetes objects: it validates a spec against the
// CUE schema in package schemas, checks what CUE cannot express, and emits a
// Namespace, PVCs, Services, Deployments and JobSets that are correct by
// construction. Every emitted node carries the position of the spec line
// that produced it, so findings on compiled objects point into the spec.
package compiler

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

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

// Spec holds the blocks of an App.
type Spec struct {
	Target    Target               `json:"target"`
	Namespace *NamespaceSpec       `json:"namespace"`
	Configs   map[string]*Config   `json:"configs"`
	Volumes   map[string]*Volume   `json:"volumes"`
	Services  map[string]*Service  `json:"services"`
	Jobs      map[string]*Job      `json:"jobs"`
	Training  map[string]*Training `json:"training"`
}

// Target gates features: the Kubernetes minor and the JobSet release.
type Target struct {
	Kubernetes   string   `json:"kubernetes"`
	JobSet       string   `json:"jobset"`
	Ingress      string   `json:"ingress"`
	Gateway      *Gateway `json:"gateway"`
	IngressClass string   `json:"ingressClass"`
	GPUPool      *GPUPool `json:"gpuPool"`
}

// GPUPool is the scheduling every pod that requests GPUs gets.
type GPUPool struct {
	NodeSelector map[string]string `json:"nodeSelector"`
	Tolerations  []*Toleration     `json:"tolerations"`
}

// Gateway is the Gateway HTTPRoutes attach to.
type Gateway struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
	Listener  string `json:"listener"`
}

// Network is a service's NetworkPolicy: who may come in, where it may go.
type Network struct {
	AllowFrom []*Peer   `json:"allowFrom"`
	Egress    []*Egress `json:"egress"`
}

// Peer is a service or job of the spec, or the namespaces with labels.
type Peer struct {
	Service    string            `json:"service"`
	Job        string            `json:"job"`
	Namespaces map[string]string `json:"namespaces"`
}

// Egress is an IP block or the namespaces with labels, on ports.
type Egress struct {
	CIDR       string            `json:"cidr"`
	Except     []string          `json:"except"`
	Namespaces map[string]string `json:"namespaces"`
	Ports      []int             `json:"ports"`
}

// Route sends outside traffic for a host and path prefixes to a service port.
type Route struct {
	Host  string    `json:"host"`
	Paths []string  `json:"paths"`
	Port  string    `json:"port"`
	TLS   *RouteTLS `json:"tls"`
}

// RouteTLS names the Secret with a route's certificate.
type RouteTLS struct {
	Secret string `json:"secret"`
}

// NamespaceSpec asks for a Namespace object.
type NamespaceSpec struct {
	Security *Security         `json:"security"`
	Labels   map[string]string `json:"labels"`
}

// Config is a ConfigMap: literal data and files read at build time (paths
// relative to the spec file).
type Config struct {
	Data  map[string]string `json:"data"`
	Files map[string]string `json:"files"`

	content map[string][]byte // the files, read by Load
}

// Pod is a pod template's metadata and scheduling.
type Pod struct {
	Labels                 map[string]string `json:"labels"`
	Annotations            map[string]string `json:"annotations"`
	ServiceAccount         string            `json:"serviceAccount"`
	NodeSelector           map[string]string `json:"nodeSelector"`
	Tolerations            []*Toleration     `json:"tolerations"`
	Affinity               json.RawMessage   `json:"affinity"`
	TopologySpread         []*TopologySpread `json:"topologySpread"`
	PriorityClass          string            `json:"priorityClass"`
	ImagePullSecrets       []string          `json:"imagePullSecrets"`
	TerminationGracePeriod string            `json:"terminationGracePeriod"`
}

// Toleration is a pod toleration.
type Toleration struct {
	Key               string `json:"key"`
	Operator          string `json:"operator"`
	Value             string `json:"value"`
	Effect            string `json:"effect"`
	TolerationSeconds *int64 `json:"tolerationSeconds"`
}

// TopologySpread spreads a workload's pods over a topology key.
type TopologySpread struct {
	TopologyKey       string `json:"topologyKey"`
	MaxSkew           int    `json:"maxSkew"`
	WhenUnsatisfiable string `json:"whenUnsatisfiable"`
}

// UnmarshalJSON decodes a spread constraint with the schema's defaults.
func (t *TopologySpread) UnmarshalJSON(b []byte) error {
	type plain TopologySpread
	p := plain{MaxSkew: 1, WhenUnsatisfiable: "DoNotSchedule"}
	err := json.Unmarshal(b, &p)
	*t = TopologySpread(p)
	return err
}

// EnvValue is a literal, or a key of a config ({config, key}) or of an
// existing Secret ({secret, key}).
type EnvValue struct {
	Value  string
	Config string `json:"config"`
	Secret string `json:"secret"`
	Key    string `json:"key"`
}

// UnmarshalJSON accepts a string or a reference object.
func (v *EnvValue) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		return json.Unmarshal(b, &v.Value)
	}
	type plain EnvValue
	var p plain
	err := json.Unmarshal(b, &p)
	*v = EnvValue(p)
	return err
}

// Literal is an env value given as text.
func Literal(s string) EnvValue { return EnvValue{Value: s} }

// IsRef reports whether the value refers to a config or a Secret.
func (v EnvValue) IsRef() bool { return v.Config != "" || v.Secret != "" }

// EnvFrom takes every key of a config or an existing Secret as env, names prefixed.
type EnvFrom struct {
	Config string `json:"config"`
	Secret string `json:"secret"`
	Prefix string `json:"prefix"`
}

// FileRef mounts a config or an existing Secret: one key as a file, or all
// keys as a directory.
type FileRef struct {
	Config string `json:"config"`
	Secret string `json:"secret"`
	Key    string `json:"key"`
}

// Role is the resources of one tensorflow role.
type Role struct {
	Resources *Resources `json:"resources"`
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
	Replicas   int               `json:"replicas"`
	Ports      map[string]int    `json:"ports"`
	Init       []*Container      `json:"init"`
	Sidecars   []*Container      `json:"sidecars"`
	Containers []*Container      `json:"containers"`
	Security   *PodSecurity      `json:"security"`
	Pod        *Pod              `json:"pod"`
	Routes     map[string]*Route `json:"routes"`
	Network    *Network          `json:"network"`
	SHM        *Quantity         `json:"shm"`
	Autoscale  *Autoscale        `json:"autoscale"`
	Disruption *Disruption       `json:"disruption"`
}

// Job compiles to a CronJob (with Schedule) or a Job.
type Job struct {
	Schedule         string       `json:"schedule"`
	TimeZone         string       `json:"timeZone"`
	Concurrency      string       `json:"concurrency"`
	Backoff          *int         `json:"backoff"`
	TTLAfterFinished string       `json:"ttlAfterFinished"`
	Init             []*Container `json:"init"`
	Sidecars         []*Container `json:"sidecars"`
	Containers       []*Container `json:"containers"`
	Security         *PodSecurity `json:"security"`
	Pod              *Pod         `json:"pod"`
	SHM              *Quantity    `json:"shm"`
}

// Autoscale compiles to a HorizontalPodAutoscaler.
type Autoscale struct {
	Min    int  `json:"min"`
	Max    int  `json:"max"`
	CPU    *int `json:"cpu"`
	Memory *int `json:"memory"`
}

// UnmarshalJSON decodes autoscale with min defaulting to 1.
func (a *Autoscale) UnmarshalJSON(b []byte) error {
	type plain Autoscale
	p := plain{Min: 1}
	err := json.Unmarshal(b, &p)
	*a = Autoscale(p)
	return err
}

// Disruption compiles to a PodDisruptionBudget.
type Disruption struct {
	MinAvailable   *IntOrPercent `json:"minAvailable"`
	MaxUnavailable *IntOrPercent `json:"maxUnavailable"`
}

// IntOrPercent is a whole number or a percentage ("25%").
type IntOrPercent struct {
	N       int
	Percent bool
}

// UnmarshalJSON accepts a JSON number or a string "N%".
func (v *IntOrPercent) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		n, err := strconv.Atoi(strings.TrimSuffix(s, "%"))
		v.N, v.Percent = n, true
		return err
	}
	n, err := strconv.Atoi(string(b))
	v.N, v.Percent = n, false
	return err
}

// MarshalJSON writes the number or the percentage.
func (v IntOrPercent) MarshalJSON() ([]byte, error) {
	if v.Percent {
		return json.Marshal(strconv.Itoa(v.N) + "%")
	}
	return []byte(strconv.Itoa(v.N)), nil
}

// String is the value as written.
func (v IntOrPercent) String() string {
	if v.Percent {
		return strconv.Itoa(v.N) + "%"
	}
	return strconv.Itoa(v.N)
}

// Training compiles to a JobSet.
type Training struct {
	Framework        string              `json:"framework"`
	Nodes            Nodes               `json:"nodes"`
	GPUsPerNode      int                 `json:"gpusPerNode"`
	ParameterServers int                 `json:"parameterServers"`
	Roles            map[string]*Role    `json:"roles"`
	Image            string              `json:"image"`
	Command          []string            `json:"command"`
	Args             []string            `json:"args"`
	Env              map[string]EnvValue `json:"env"`
	EnvFrom          []*EnvFrom          `json:"envFrom"`
	Files            map[string]FileRef  `json:"files"`
	Mounts           map[string]string   `json:"mounts"`
	Resources        *Resources          `json:"resources"`
	SHM              Quantity            `json:"shm"`
	Port             int                 `json:"port"`
	MaxRestarts      int                 `json:"maxRestarts"`
	RestartStrategy  string              `json:"restartStrategy"`
	OnPreemption     string              `json:"onPreemption"`
	TTLAfterFinished string              `json:"ttlAfterFinished"`
	Init             []*Container        `json:"init"`
	Sidecars         []*Container        `json:"sidecars"`
	Security         *PodSecurity        `json:"security"`
	Pod              *Pod                `json:"pod"`
	Queue            string              `json:"queue"`
}

// Nodes is a training job's pod count: Max pods, and for elastic training
// (written "MIN:MAX") the fewest it runs with.
type Nodes struct {
	Min, Max int
	Elastic  bool
}

// UnmarshalJSON accepts a number or "MIN:MAX".
func (n *Nodes) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		lo, hi, _ := strings.Cut(s, ":")
		var err1, err2 error
		n.Min, err1 = strconv.Atoi(lo)
		n.Max, err2 = strconv.Atoi(hi)
		n.Elastic = true
		return errors.Join(err1, err2)
	}
	v, err := strconv.Atoi(string(b))
	n.Min, n.Max, n.Elastic = v, v, false
	return err
}

// Container is an init container, a sidecar or an app container.
type Container struct {
	Name      string              `json:"name"`
	Image     string              `json:"image"`
	Command   []string            `json:"command"`
	Args      []string            `json:"args"`
	Env       map[string]EnvValue `json:"env"`
	EnvFrom   []*EnvFrom          `json:"envFrom"`
	Files     map[string]FileRef  `json:"files"`
	Mounts    map[string]string   `json:"mounts"`
	Resources *Resources          `json:"resources"`
	Security  *ContainerSecurity  `json:"security"`
	Ports     map[string]int      `json:"ports"`
	Startup   *Probe              `json:"startup"`
	Ready     *Probe              `json:"ready"`
	Live      *Probe              `json:"live"`
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

// Resources are a container's CPU, memory and GPUs: cpu becomes a request,
// memory and gpus a request and an equal limit.
type Resources struct {
	CPU         Quantity `json:"cpu"`
	Memory      Quantity `json:"memory"`
	GPUs        int      `json:"gpus"`
	GPUResource string   `json:"gpuResource"`
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
	p := plain{Nodes: Nodes{1, 1, false}, Port: 29500, OnPreemption: "restart"}
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
