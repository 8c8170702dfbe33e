package storage

import (
	_ "embed"
	"fmt"
	"strings"
	"sync"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

//go:embed provisioners.yaml
var provisionersYAML []byte

// provisioner is what kiln knows of a storage provisioner.
type provisioner struct {
	Name string `yaml:"name"`
	// RWX: it serves ReadWriteMany file systems.
	RWX bool `yaml:"rwx"`
	// RWXBlock: it accepts ReadWriteMany for volumeMode: Block only.
	RWXBlock bool   `yaml:"rwxBlock"`
	What     string `yaml:"what"`
}

// wellKnownClass is a StorageClass name that managed clusters create.
type wellKnownClass struct {
	Name        string `yaml:"name"`
	Provisioner string `yaml:"provisioner"`
	Where       string `yaml:"where"`
}

type table struct {
	Provisioners []provisioner    `yaml:"provisioners"`
	Classes      []wellKnownClass `yaml:"classes"`
}

// known is the table, read on first use: only storage objects need it,
// and a run without them does not pay for the parse at start-up.
var known = sync.OnceValue(func() *table { return mustLoadTable(provisionersYAML) })

func loadTable(data []byte) (*table, error) {
	var t table
	if err := yaml.Unmarshal(data, &t); err != nil {
		return nil, err
	}
	names := map[string]bool{}
	for _, p := range t.Provisioners {
		if p.Name == "" || p.What == "" || names[p.Name] {
			return nil, fmt.Errorf("provisioner %q: name and what are required, once per name", p.Name)
		}
		names[p.Name] = true
	}
	classes := map[string]bool{}
	for _, c := range t.Classes {
		if c.Name == "" || classes[c.Name] || !names[c.Provisioner] {
			return nil, fmt.Errorf("class %q: needs a unique name and a provisioner listed under provisioners (got %q)", c.Name, c.Provisioner)
		}
		classes[c.Name] = true
	}
	return &t, nil
}

func mustLoadTable(data []byte) *table {
	t, err := loadTable(data)
	if err != nil {
		panic("storage: provisioners.yaml: " + err.Error())
	}
	return t
}

// lookupProvisioner finds a provisioner by name; a name prefixed with an
// install's own namespace ("rook-ceph.rbd.csi.ceph.com") matches its driver.
func (t *table) lookupProvisioner(name string) *provisioner {
	for i, p := range t.Provisioners {
		if name == p.Name || strings.HasSuffix(name, "."+p.Name) {
			return &t.Provisioners[i]
		}
	}
	return nil
}

// lookupClass finds a well-known class by name.
func (t *table) lookupClass(name string) *wellKnownClass {
	for i, c := range t.Classes {
		if c.Name == name {
			return &t.Classes[i]
		}
	}
	return nil
}
