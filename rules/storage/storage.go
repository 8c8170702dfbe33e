// Package storage holds kiln's storage rules (storage/…): ReadWriteMany
// claims on storage that cannot serve them, ReadWriteOnce claims shared by
// several pods, inline NFS volumes, and RWX claims left to the default class.
//
// storage/inline-nfs is single-object and written as a
// ValidatingAdmissionPolicy in rules/policies (its fixtures stay here).
// The others stay in Go: storage/rwx-unsupported and storage/rwx-no-class
// need StorageClasses (from the input, a --storage-classes file, or the
// table in provisioners.yaml; rwx-no-class names the default class it
// finds), and storage/rwo-shared needs every workload of the input.
package storage

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules"
	"github.com/kilnhq/kiln/rules/internal/podutil"
)

// Rule IDs.
const (
	RWXUnsupported = "storage/rwx-unsupported"
	RWOShared      = "storage/rwo-shared"
	InlineNFS      = "storage/inline-nfs" // a policy in rules/policies
	RWXNoClass     = "storage/rwx-no-class"
)

// Checker reports the storage rules.
var Checker = &rules.Checker{Name: "storage", Rules: ruleList, Prepare: prepare, Requires: []rules.Context{rules.StorageClasses}, Relates: true}

// betaClassAnnotation is the pre-1.6 way to name a claim's class, still honoured.
const betaClassAnnotation = "volume.beta.kubernetes.io/storage-class"

// defaultClassAnnotation marks a cluster's default StorageClass.
const defaultClassAnnotation = "storageclass.kubernetes.io/is-default-class"

// claim is a PersistentVolumeClaim or a StatefulSet volumeClaimTemplate.
type claim struct {
	obj        *manifest.Object
	specPath   string // "spec" or "spec.volumeClaimTemplates[i].spec"
	name       string
	namespace  string
	modes      []string
	class      string
	hasClass   bool // storageClassName (or the beta annotation) is set, even to ""
	volumeMode string
	volumeName string
	template   bool // a StatefulSet volumeClaimTemplate: one claim per pod
}

// modeField returns the path of the claim's first access mode equal to m.
func (c *claim) modeField(m string) string {
	return c.specPath + ".accessModes[" + strconv.Itoa(slices.Index(c.modes, m)) + "]"
}

func (c *claim) describe() string {
	if c.template {
		return fmt.Sprintf("volumeClaimTemplate %q of StatefulSet %q", c.name, c.obj.Name)
	}
	return fmt.Sprintf("claim %q", c.name)
}

func newClaim(o *manifest.Object, content map[string]any, metaPath, specPath string) *claim {
	spec, _ := podutil.At(content, specPath).(map[string]any)
	meta, _ := podutil.At(content, metaPath).(map[string]any)
	c := &claim{obj: o, specPath: specPath, name: podutil.Str(meta, "name"), namespace: o.Namespace,
		volumeMode: podutil.Str(spec, "volumeMode"), volumeName: podutil.Str(spec, "volumeName")}
	for _, m := range podutil.List(spec, "accessModes") {
		if s, ok := m.(string); ok {
			c.modes = append(c.modes, s)
		}
	}
	if v, ok := spec["storageClassName"]; ok {
		c.class, _ = v.(string)
		c.hasClass = true
	} else if v, ok := podutil.Map(meta, "annotations")[betaClassAnnotation].(string); ok {
		c.class, c.hasClass = v, true
	}
	return c
}

// claimsOf returns the claims an object declares.
func claimsOf(o *manifest.Object, content map[string]any) []*claim {
	switch {
	case o.Kind == "PersistentVolumeClaim" && o.Group() == "":
		return []*claim{newClaim(o, content, "metadata", "spec")}
	case o.Kind == "StatefulSet" && o.Group() == "apps":
		var out []*claim
		for i := range podutil.List(podutil.Map(content, "spec"), "volumeClaimTemplates") {
			p := "spec.volumeClaimTemplates[" + strconv.Itoa(i) + "]"
			c := newClaim(o, content, p+".metadata", p+".spec")
			c.template = true
			out = append(out, c)
		}
		return out
	}
	return nil
}

// storageClass is a class the checker knows, and where it learnt of it.
type storageClass struct {
	name, provisioner, source string
	isDefault                 bool
}

// classesOf collects the StorageClasses of the input and of the
// --storage-classes file (Pass.Given); the input wins.
func classesOf(p *rules.Pass) (map[string]*storageClass, error) {
	out := map[string]*storageClass{}
	add := func(objs []*manifest.Object, source string) {
		for _, o := range objs {
			if o.Kind != "StorageClass" || o.Group() != "storage.k8s.io" || o.Name == "" {
				continue
			}
			content, err := o.Content()
			if err != nil {
				continue
			}
			out[o.Name] = &storageClass{name: o.Name, provisioner: podutil.Str(content, "provisioner"),
				source: source, isDefault: o.Annotations[defaultClassAnnotation] == "true"}
		}
	}
	given, errs := p.Given(rules.StorageClasses)
	if len(errs) > 0 {
		return nil, errs[0]
	}
	add(given, "--storage-classes "+p.Options.StorageClasses)
	add(p.Objects, "the input")
	return out, nil
}

// resolve finds a class by name: the input or the class file, else the table.
func resolve(classes map[string]*storageClass, name string) *storageClass {
	if c := classes[name]; c != nil {
		return c
	}
	if w := known().lookupClass(name); w != nil {
		return &storageClass{name: name, provisioner: w.Provisioner, source: "kiln's table of well-known classes: " + w.Where}
	}
	return nil
}

// defaultClass returns the class marked default in the input or class file, or nil.
func defaultClass(classes map[string]*storageClass) *storageClass {
	var names []string
	for n, c := range classes {
		if c.isDefault {
			names = append(names, n)
		}
	}
	if len(names) != 1 {
		return nil // none, or ambiguous
	}
	return classes[names[0]]
}

// prepare reads the StorageClasses and returns the judge that checks each
// claim and records the ReadWriteOnce claims and their users, which
// storage/rwo-shared relates once every object was judged.
func prepare(p *rules.Pass) (rules.Judge, error) {
	classes, err := classesOf(p)
	if err != nil {
		return nil, err
	}
	def := defaultClass(classes)
	shared := &sharing{claims: map[claimKey]*claim{}}
	p.Finish(func() { shared.report(p) })
	return func(o *manifest.Object) {
		content, err := o.Content()
		if err != nil || content == nil {
			return
		}
		for _, c := range claimsOf(o, content) {
			rep := func(rule string) func(field, msg string) {
				return func(field, msg string) {
					p.Report(rules.Diagnostic{Rule: rule, Object: o, Field: field, Message: msg})
				}
			}
			checkRWXUnsupported(c, classes, def, rep(RWXUnsupported))
			checkRWXNoClass(c, def, rep(RWXNoClass))
			shared.addClaim(c)
		}
		shared.addUses(p, o, content)
	}, nil
}
