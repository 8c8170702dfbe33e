package compiler

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/kilnhq/kiln/manifest"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// ConfigHashAnnotation is the pod template annotation of a Deployment
// whose pods read compiled configs: a hash of those configs' content, so
// that changing one changes the template and rolls the pods (Helm's
// checksum/config idiom). A subPath mount never sees a change in a running
// pod, and env from a ConfigMap is read only at container start; the
// rollout is how either reaches the pods.
const ConfigHashAnnotation = "kiln.dev/config-hash"

// maxConfigMapBytes is the most data a ConfigMap may hold: the API server's
// ValidateConfigMap rejects more than core.MaxSecretSize (1 MiB) in data and
// binaryData together.
const maxConfigMapBytes = 1 << 20

// readConfigFiles reads every file of spec.configs, relative to the spec's
// directory, into the App. A path must stay inside that directory (no "..",
// no symbolic link out of it): a spec must not pull arbitrary files of the
// machine that builds it into its output.
func (c *checker) readConfigFiles(a *App) {
	base := ""
	if c.spec.File != "" && c.spec.File != "-" {
		base = filepath.Dir(c.spec.File)
	}
	for _, name := range sortedKeys(a.Spec.Configs) {
		cfg := a.Spec.Configs[name]
		path := "spec.configs." + name
		cfg.content = map[string][]byte{}
		total := 0
		for _, k := range sortedKeys(cfg.Data) {
			total += len(k) + len(cfg.Data[k])
		}
		for _, k := range sortedKeys(cfg.Files) {
			field := sub(path+".files", k)
			if _, dup := cfg.Data[k]; dup {
				c.errorf(field, "config %q has key %q in both data and files; a ConfigMap key holds one value", name, k)
				continue
			}
			rel := cfg.Files[k]
			if base == "" {
				c.errorf(field, "config files are read relative to the spec file, but this spec has no file (it came from standard input); give the spec as a file")
				continue
			}
			if hasDotDot(rel) {
				c.errorf(field, "file %q leaves the spec's directory; config files must be inside %s", rel, base)
				continue
			}
			full := filepath.Join(base, filepath.FromSlash(rel))
			if !insideDir(base, full) {
				c.errorf(field, "file %q is a link that leaves the spec's directory; config files must be inside %s", rel, base)
				continue
			}
			data, err := os.ReadFile(full)
			if err != nil {
				c.errorf(field, "cannot read config file %s: %v", full, plainErr(err))
				continue
			}
			cfg.content[k] = data
			total += len(k) + len(data)
		}
		if total > maxConfigMapBytes {
			c.errorf(path, "config %q holds %d bytes; a ConfigMap holds at most %d (1 MiB): split it, or ship the files in the image or a volume", name, total, maxConfigMapBytes)
		}
	}
}

// insideDir reports whether file, symbolic links resolved, is inside dir
// (a file that does not exist yet counts as inside: reading it fails later).
func insideDir(dir, file string) bool {
	realDir, err1 := filepath.EvalSymlinks(dir)
	realFile, err2 := filepath.EvalSymlinks(file)
	if err1 != nil || err2 != nil {
		return true
	}
	absDir, err1 := filepath.Abs(realDir)
	absFile, err2 := filepath.Abs(realFile)
	if err1 != nil || err2 != nil {
		return false
	}
	r, err := filepath.Rel(absDir, absFile)
	return err == nil && !hasDotDot(filepath.ToSlash(r))
}

func hasDotDot(rel string) bool {
	for _, seg := range strings.Split(rel, "/") {
		if seg == ".." {
			return true
		}
	}
	return false
}

// plainErr drops the Go operation and path prefix of a file error.
func plainErr(err error) string {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err.Error()
	}
	return err.Error()
}

// configMaps emits a ConfigMap per config, by name: data from data: and
// from the text files, binaryData from files that are not UTF-8 text.
func (e *emitter) configMaps() []*yaml.Node {
	var out []*yaml.Node
	for _, name := range sortedKeys(e.app.Spec.Configs) {
		cfg := e.app.Spec.Configs[name]
		path := "spec.configs." + name
		p := e.at(path)
		data, binary := mapping(p), mapping(p)
		for _, k := range sortedKeys(keysOf(cfg)) {
			if v, ok := cfg.Data[k]; ok {
				add(data, field{k, str(e.at(sub(path+".data", k)), v)})
				continue
			}
			b := cfg.content[k]
			fp := e.at(sub(path+".files", k))
			if utf8.Valid(b) {
				add(data, field{k, str(fp, string(b))})
			} else {
				add(binary, field{k, str(fp, encodeBase64(b))})
			}
		}
		n := mapping(p,
			field{"apiVersion", str(p, "v1")},
			field{"kind", str(p, "ConfigMap")},
			field{"metadata", e.metadata(p, name, true, nil)},
		)
		if len(binary.Content) > 0 {
			add(n, field{"binaryData", binary})
		}
		if len(data.Content) > 0 {
			add(n, field{"data", data})
		}
		out = append(out, n)
	}
	return out
}

func keysOf(cfg *Config) map[string]bool {
	keys := map[string]bool{}
	for k := range cfg.Data {
		keys[k] = true
	}
	for k := range cfg.content {
		keys[k] = true
	}
	return keys
}

// configKeys lists the keys a config will hold.
func configKeys(cfg *Config) []string {
	keys := map[string]bool{}
	for k := range cfg.Data {
		keys[k] = true
	}
	for k := range cfg.Files {
		keys[k] = true
	}
	return sortedKeys(keys)
}

func encodeBase64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// ConfigFiles lists the files a spec's configs read (paths as the spec's
// file is named, joined with each relative path), so that a build can tell
// them from manifests. A spec that does not decode lists none.
func ConfigFiles(spec *manifest.Object) []string {
	content, err := spec.Content()
	if err != nil || spec.File == "" || spec.File == "-" {
		return nil
	}
	s, _ := content["spec"].(map[string]any)
	cfgs, _ := s["configs"].(map[string]any)
	var out []string
	for _, name := range sortedKeys(cfgs) {
		cfg, _ := cfgs[name].(map[string]any)
		files, _ := cfg["files"].(map[string]any)
		for _, k := range sortedKeys(files) {
			if rel, ok := files[k].(string); ok && rel != "" && !strings.HasPrefix(rel, "/") {
				out = append(out, filepath.Join(filepath.Dir(spec.File), filepath.FromSlash(rel)))
			}
		}
	}
	return out
}

// configHash is the SHA-256 (hex) of the named configs' content: each
// config's name, then each key with its value as the ConfigMap holds it
// (text or bytes), every part length-prefixed.
func (e *emitter) configHash(names []string) string {
	h := sha256.New()
	part := func(b []byte) { fmt.Fprintf(h, "%d:", len(b)); h.Write(b) }
	for _, name := range names {
		cfg := e.app.Spec.Configs[name]
		part([]byte(name))
		for _, k := range sortedKeys(keysOf(cfg)) {
			part([]byte(k))
			if v, ok := cfg.Data[k]; ok {
				part([]byte(v))
			} else {
				part(cfg.content[k])
			}
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// configsRead lists, by name, the configs the containers read: through env
// ({config: …}), envFrom or files mounted from them.
func configsRead(cs ...[]*Container) []string {
	names := map[string]bool{}
	for _, list := range cs {
		for _, c := range list {
			for _, v := range c.Env {
				if v.Config != "" {
					names[v.Config] = true
				}
			}
			for _, f := range c.Files {
				if f.Config != "" {
					names[f.Config] = true
				}
			}
			for _, f := range c.EnvFrom {
				if f.Config != "" {
					names[f.Config] = true
				}
			}
		}
	}
	return sortedKeys(names)
}
