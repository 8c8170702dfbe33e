package argocd

import (
	"encoding/json"
	"fmt"

	"github.com/kilnhq/kiln/manifest"
)

// application is the part of an Application (argoproj.io/v1alpha1) that
// decides what it renders, as Argo CD's types name it.
type application struct {
	Metadata struct {
		Name        string            `json:"name"`
		Namespace   string            `json:"namespace"`
		Annotations map[string]string `json:"annotations"`
	} `json:"metadata"`
	Spec struct {
		Source      *source  `json:"source"`
		Sources     []source `json:"sources"`
		Destination struct {
			Namespace string `json:"namespace"`
			Server    string `json:"server"`
			Name      string `json:"name"`
		} `json:"destination"`
		SyncPolicy *struct {
			SyncOptions              []string `json:"syncOptions"`
			ManagedNamespaceMetadata *struct {
				Labels      map[string]string `json:"labels"`
				Annotations map[string]string `json:"annotations"`
			} `json:"managedNamespaceMetadata"`
		} `json:"syncPolicy"`
	} `json:"spec"`
}

// source is an ApplicationSource.
type source struct {
	RepoURL        string     `json:"repoURL"`
	Path           string     `json:"path"`
	TargetRevision string     `json:"targetRevision"`
	Chart          string     `json:"chart"`
	Ref            string     `json:"ref"`
	Name           string     `json:"name"`
	Helm           *helmSpec  `json:"helm"`
	Kustomize      *kustSpec  `json:"kustomize"`
	Directory      *dirSpec   `json:"directory"`
	Plugin         *pluginRef `json:"plugin"`
	// overrides are the .argocd-source files merged into it
	// (withOverrides): its settings are then not all written in the
	// Application, so no value is placed at the Application's lines.
	overrides []string
}

type helmSpec struct {
	ValueFiles              []string        `json:"valueFiles"`
	IgnoreMissingValueFiles bool            `json:"ignoreMissingValueFiles"`
	Values                  string          `json:"values"`
	ValuesObject            json.RawMessage `json:"valuesObject"`
	Parameters              []struct {
		Name        string `json:"name"`
		Value       string `json:"value"`
		ForceString bool   `json:"forceString"`
	} `json:"parameters"`
	FileParameters []struct {
		Name string `json:"name"`
		Path string `json:"path"`
	} `json:"fileParameters"`
	ReleaseName string   `json:"releaseName"`
	Namespace   string   `json:"namespace"`
	SkipCrds    bool     `json:"skipCrds"`
	SkipTests   bool     `json:"skipTests"`
	APIVersions []string `json:"apiVersions"`
	KubeVersion string   `json:"kubeVersion"`
}

type kustSpec struct {
	NamePrefix              string            `json:"namePrefix"`
	NameSuffix              string            `json:"nameSuffix"`
	Images                  []string          `json:"images"`
	Namespace               string            `json:"namespace"`
	CommonLabels            map[string]string `json:"commonLabels"`
	CommonAnnotations       map[string]string `json:"commonAnnotations"`
	LabelWithoutSelector    bool              `json:"labelWithoutSelector"`
	ForceCommonLabels       bool              `json:"forceCommonLabels"`
	ForceCommonAnnotations  bool              `json:"forceCommonAnnotations"`
	Patches                 []any             `json:"patches"`
	Components              []string          `json:"components"`
	IgnoreMissingComponents bool              `json:"ignoreMissingComponents"`
	Replicas                []struct {
		Name  string `json:"name"`
		Count any    `json:"count"`
	} `json:"replicas"`
}

type dirSpec struct {
	Recurse bool            `json:"recurse"`
	Include string          `json:"include"`
	Exclude string          `json:"exclude"`
	Jsonnet json.RawMessage `json:"jsonnet"`
}

type pluginRef struct {
	Name string `json:"name"`
	Env  []struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	} `json:"env"`
	Parameters []PluginParameter `json:"parameters"`
}

// readApplication decodes an Application object.
func readApplication(o *manifest.Object) (*application, error) {
	c, err := o.Content()
	if err != nil {
		return nil, err
	}
	data, err := json.Marshal(c)
	if err != nil {
		return nil, err
	}
	var a application
	if err := json.Unmarshal(data, &a); err != nil {
		return nil, fmt.Errorf("cannot read its spec: %v", err)
	}
	return &a, nil
}

// sources returns the Application's sources: spec.sources when set (Argo
// CD then ignores spec.source), else spec.source.
func (a *application) sources() []source {
	if len(a.Spec.Sources) > 0 {
		return a.Spec.Sources
	}
	if a.Spec.Source != nil {
		return []source{*a.Spec.Source}
	}
	return nil
}

// explicitType is the tool a source names itself (Argo CD's
// ApplicationSource.ExplicitType): "" when none, an error when several.
func (s *source) explicitType() (string, error) {
	var types []string
	if s.Helm != nil {
		types = append(types, "Helm")
	}
	if s.Kustomize != nil {
		types = append(types, "Kustomize")
	}
	if s.Directory != nil {
		types = append(types, "Directory")
	}
	if s.Plugin != nil {
		types = append(types, "Plugin")
	}
	switch len(types) {
	case 0:
		return "", nil
	case 1:
		return types[0], nil
	}
	return "", fmt.Errorf("multiple application sources defined: %v", types)
}
