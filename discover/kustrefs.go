package discover

import (
	"github.com/kilnhq/kiln/internal/pathkey"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/kilnhq/kiln/manifest"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// kustRefs is what one kustomization file names, read with kustomize's own
// type, whether or not kiln can build it (a remote base, a plugin, an
// error): the files its build reads, by the role they play.
type kustRefs struct {
	file string
	// resources are the local files named as resources, bases or CRDs.
	resources []string
	// patches are the files named as patches (patches, patchesJson6902,
	// and the patchesStrategicMerge entries that are files).
	patches []string
	// inputs are the other files a build reads: generators' files and env
	// files, configurations, replacements, plugin configs, the OpenAPI schema.
	inputs []string
	// deprecated are the fields kustomize warns about, where they are written.
	deprecated []deprecatedField
}

// deprecatedField is a kustomization field kustomize deprecates.
type deprecatedField struct {
	key, use string
	pos      manifest.Position
}

// readKustRefs reads the kustomization in dir. Paths are absolute; only
// those naming a file that exists are kept (a directory is another
// kustomization, built on its own). A file kustomize cannot read gives no
// names: its build reports why.
func readKustRefs(dir string) *kustRefs {
	r := &kustRefs{file: kustomizationFile(dir)}
	data, err := os.ReadFile(r.file)
	if err != nil {
		return r
	}
	var k types.Kustomization
	if k.Unmarshal(data) != nil {
		return r
	}
	base := pathkey.Real(dir)
	files := func(list *[]string, paths ...string) {
		for _, p := range paths {
			if p == "" || isRemote(p) {
				continue
			}
			if !filepath.IsAbs(p) {
				p = filepath.Join(base, p)
			}
			if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
				*list = append(*list, filepath.Clean(p))
			}
		}
	}
	files(&r.resources, k.Resources...)
	files(&r.resources, k.Bases...)
	files(&r.resources, k.Crds...)
	for _, p := range append(append([]types.Patch(nil), k.Patches...), k.PatchesJson6902...) {
		files(&r.patches, p.Path)
	}
	for _, p := range k.PatchesStrategicMerge {
		// An entry is a file if one by that name exists, else an inline patch (as kustomize reads it).
		if s := string(p); !strings.Contains(s, "\n") {
			files(&r.patches, s)
		}
	}
	files(&r.inputs, k.Configurations...)
	files(&r.inputs, k.Generators...)
	files(&r.inputs, k.Transformers...)
	files(&r.inputs, k.Validators...)
	files(&r.inputs, k.OpenAPI["path"])
	for _, rp := range k.Replacements {
		files(&r.inputs, rp.Path)
	}
	for _, g := range k.ConfigMapGenerator {
		r.addGeneratorInputs(files, g.KvPairSources)
	}
	for _, g := range k.SecretGenerator {
		r.addGeneratorInputs(files, g.KvPairSources)
	}
	r.deprecated = deprecatedFields(r.file, data, &k)
	return r
}

// addGeneratorInputs adds a generator's files ([key=]path) and env files.
func (r *kustRefs) addGeneratorInputs(files func(*[]string, ...string), kv types.KvPairSources) {
	for _, f := range kv.FileSources {
		if _, path, ok := strings.Cut(f, "="); ok {
			f = path
		}
		files(&r.inputs, f)
	}
	files(&r.inputs, kv.EnvSources...)
	files(&r.inputs, kv.EnvSource)
}

// deprecatedFields lists the fields of k that kustomize's own check
// (Kustomization.CheckDeprecatedFields, whose warnings kustomize prints on
// stderr for every build that reads the file) deprecates, at their keys.
func deprecatedFields(file string, data []byte, k *types.Kustomization) []deprecatedField {
	warnings := k.CheckDeprecatedFields()
	if warnings == nil || len(*warnings) == 0 {
		return nil
	}
	// kustomize's fields and what replaces each, as its warnings say.
	replaced := []struct {
		key, use string
		set      bool
	}{
		{"bases", "resources", k.Bases != nil},
		{"commonLabels", "labels", k.CommonLabels != nil},
		{"imageTags", "images", k.ImageTags != nil},
		{"patchesJson6902", "patches", k.PatchesJson6902 != nil},
		{"patchesStrategicMerge", "patches", k.PatchesStrategicMerge != nil},
		{"vars", "replacements", k.Vars != nil},
	}
	var root *yaml.Node
	var doc yaml.Node
	if yaml.Unmarshal(data, &doc) == nil && len(doc.Content) > 0 {
		root = doc.Content[0]
	}
	var out []deprecatedField
	for _, r := range replaced {
		if !r.set {
			continue
		}
		pos := manifest.Position{File: file, Line: 1, Column: 1}
		if root != nil && root.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(root.Content); i += 2 {
				if key := root.Content[i]; key.Value == r.key {
					pos.Line, pos.Column = key.Line, key.Column
				}
			}
		}
		out = append(out, deprecatedField{key: r.key, use: r.use, pos: pos})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].pos.Line < out[j].pos.Line })
	return out
}

// deprecationWarning is one warning for a kustomization's deprecated
// fields, at the first of them: what kustomize prints once per build, said
// once per file.
func deprecationWarning(fields []deprecatedField) error {
	parts := make([]string, len(fields))
	for i, f := range fields {
		parts[i] = "'" + f.key + "' (use '" + f.use + "')"
	}
	what := "field " + parts[0] + " is"
	if len(parts) > 1 {
		what = "fields " + strings.Join(parts, ", ") + " are"
	}
	return &manifest.Error{Pos: fields[0].pos, Msg: "warning: kustomize: the " + what + " deprecated; `kustomize edit fix` rewrites this kustomization"}
}
