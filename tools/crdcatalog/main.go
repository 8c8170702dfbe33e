// Command crdcatalog builds kiln's built-in CRD catalog (package catalog)
// from the pinned upstream releases in sources.go:
//
//	go generate ./catalog   # runs: go run ../tools/crdcatalog -out . -shared ../../shared
//
// It reads each project's CRD files from its module zip (as
// `go mod download -json MODULE@VERSION` names it; the Go module proxy is
// the only network it uses) or from a pinned local copy, keeps the
// apiextensions.k8s.io/v1 CustomResourceDefinitions whole but for their
// descriptions (schemas, defaults, CEL rules, list types and the rest stay
// as published), and writes under -out/data one gzip file of JSON per
// project version and group, data/index.json, and groups_gen.go. The
// output depends only on the inputs: run twice, it is the same bytes.
package main

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// source is one project version and where its CRD files are.
type source struct {
	Project, Version string
	// Module and ModuleVersion name the module zip holding the files;
	// else Local is a directory under -shared, a copy of Repo at Version.
	Module, ModuleVersion string
	Local, Repo           string
	// Paths are globs (path.Match, per segment) relative to the module's or
	// copy's root.
	Paths []string
	// Groups, when set, keep only the CRDs of these API groups.
	Groups []string
	// Template, when set, says the files are Helm templates of CRDs: they
	// are read with these conditions (untemplate).
	Template map[string]bool
}

// missing is a project with no offline source.
type missing struct {
	Project string   `json:"project"`
	Groups  []string `json:"groups"`
	Why     string   `json:"why"`
}

func main() {
	out := flag.String("out", ".", "the catalog package's directory (data/ and groups_gen.go are written there)")
	shared := flag.String("shared", "../shared", "the directory holding realworld/, the pinned copies of local sources")
	flag.Parse()
	files, err := build(sources, unavailable, proxyZip, *shared)
	if err != nil {
		fmt.Fprintln(os.Stderr, "crdcatalog:", err)
		os.Exit(1)
	}
	if err := write(*out, files); err != nil {
		fmt.Fprintln(os.Stderr, "crdcatalog:", err)
		os.Exit(1)
	}
}

// proxyZip returns the path of a module's zip in the module cache,
// downloading it through the Go module proxy if needed.
func proxyZip(module, version string) (string, error) {
	cmd := exec.Command("go", "mod", "download", "-json", module+"@"+version)
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod")
	outb, _ := cmd.Output() // a module asking for a newer Go still has its zip downloaded
	var info struct{ Zip, Error string }
	if err := json.Unmarshal(outb, &info); err != nil {
		return "", fmt.Errorf("go mod download %s@%s: %v", module, version, err)
	}
	if info.Zip == "" {
		return "", fmt.Errorf("go mod download %s@%s: %s", module, version, info.Error)
	}
	return info.Zip, nil
}

// write replaces dir/data and dir/groups_gen.go with files.
func write(dir string, files map[string][]byte) error {
	if err := os.RemoveAll(filepath.Join(dir, "data")); err != nil {
		return err
	}
	for _, name := range sortedKeys(files) {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, files[name], 0o644); err != nil {
			return err
		}
	}
	return nil
}

// indexFile is data/index.json (package catalog reads the same shape).
type indexFile struct {
	Entries     []indexEntry `json:"entries"`
	Unavailable []missing    `json:"unavailable"`
}

type indexEntry struct {
	Project string     `json:"project"`
	Version string     `json:"version"`
	Source  string     `json:"source"`
	Default bool       `json:"default,omitempty"`
	CRDs    []indexCRD `json:"crds"`
}

type indexCRD struct {
	Group    string   `json:"group"`
	Kind     string   `json:"kind"`
	Plural   string   `json:"plural"`
	Scope    string   `json:"scope"`
	Versions []string `json:"versions"` // served
	File     string   `json:"file"`     // under data/
}

// build reads every source and returns the catalog's files by their path
// under the package directory.
func build(srcs []source, gone []missing, zipOf func(module, version string) (string, error), shared string) (map[string][]byte, error) {
	files := map[string][]byte{}
	idx := indexFile{Unavailable: gone}
	seenProject := map[string]bool{}
	groups := map[string]bool{}
	for _, s := range srcs {
		docs, where, err := readSource(s, zipOf, shared)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %v", s.Project, s.Version, err)
		}
		if s.Template != nil {
			for i := range docs {
				if docs[i], err = untemplate(docs[i], s.Template); err != nil {
					return nil, fmt.Errorf("%s %s: %v", s.Project, s.Version, err)
				}
			}
			where += " rendered with " + conditions(s.Template)
		}
		crds, err := crdsOf(docs, s.Groups)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %v", s.Project, s.Version, err)
		}
		if len(crds) == 0 {
			return nil, fmt.Errorf("%s %s: no CustomResourceDefinition in %s", s.Project, s.Version, strings.Join(s.Paths, ", "))
		}
		e := indexEntry{Project: s.Project, Version: s.Version, Source: where, Default: !seenProject[s.Project]}
		seenProject[s.Project] = true
		byGroup := map[string][]map[string]any{}
		for _, c := range crds {
			g := str(c, "spec", "group")
			byGroup[g] = append(byGroup[g], c)
		}
		for _, g := range sortedKeys(byGroup) {
			groups[g] = true
			file := g + "/" + s.Project + "@" + s.Version + ".json.gz"
			data, err := gz(byGroup[g])
			if err != nil {
				return nil, err
			}
			files["data/"+file] = data
			for _, c := range byGroup[g] {
				e.CRDs = append(e.CRDs, indexCRD{Group: g, Kind: str(c, "spec", "names", "kind"), Plural: str(c, "spec", "names", "plural"),
					Scope: str(c, "spec", "scope"), Versions: served(c), File: file})
			}
		}
		idx.Entries = append(idx.Entries, e)
	}
	data, err := json.MarshalIndent(idx, "", " ")
	if err != nil {
		return nil, err
	}
	files["data/index.json"] = append(data, '\n')
	files["groups_gen.go"] = groupsGo(sortedKeys(groups))
	return files, nil
}

// readSource returns the YAML files of a source, in path order, and says
// where they came from.
func readSource(s source, zipOf func(module, version string) (string, error), shared string) ([][]byte, string, error) {
	patterns := strings.Join(s.Paths, " ")
	if s.Local != "" {
		root := filepath.Join(shared, filepath.FromSlash(s.Local))
		var names []string
		for _, p := range s.Paths {
			m, err := filepath.Glob(filepath.Join(root, filepath.FromSlash(p)))
			if err != nil {
				return nil, "", err
			}
			names = append(names, m...)
		}
		if len(names) == 0 {
			return nil, "", fmt.Errorf("no file matches %s under %s (the pinned copy of %s)", patterns, root, s.Repo)
		}
		sort.Strings(names)
		var docs [][]byte
		for _, n := range names {
			data, err := os.ReadFile(n)
			if err != nil {
				return nil, "", err
			}
			docs = append(docs, data)
		}
		return docs, fmt.Sprintf("%s@%s %s (copy in ../shared/%s)", s.Repo, s.Version, patterns, s.Local), nil
	}
	zp, err := zipOf(s.Module, s.ModuleVersion)
	if err != nil {
		return nil, "", err
	}
	zr, err := zip.OpenReader(zp)
	if err != nil {
		return nil, "", err
	}
	defer zr.Close()
	prefix := s.Module + "@" + s.ModuleVersion + "/"
	var matched []*zip.File
	for _, f := range zr.File {
		rel, ok := strings.CutPrefix(f.Name, prefix)
		if !ok {
			continue
		}
		for _, p := range s.Paths {
			if ok, _ := path.Match(p, rel); ok {
				matched = append(matched, f)
				break
			}
		}
	}
	if len(matched) == 0 {
		return nil, "", fmt.Errorf("no file matches %s in %s", patterns, zp)
	}
	sort.Slice(matched, func(i, j int) bool { return matched[i].Name < matched[j].Name })
	var docs [][]byte
	for _, f := range matched {
		r, err := f.Open()
		if err != nil {
			return nil, "", err
		}
		data, err := io.ReadAll(r)
		r.Close()
		if err != nil {
			return nil, "", err
		}
		docs = append(docs, data)
	}
	return docs, fmt.Sprintf("%s@%s %s", s.Module, s.ModuleVersion, patterns), nil
}

// groupsGo is groups_gen.go: the catalog's groups, sorted, as a static
// array (no initialisation at start-up).
func groupsGo(groups []string) []byte {
	var b bytes.Buffer
	b.WriteString("// Code generated by tools/crdcatalog; DO NOT EDIT.\n\npackage catalog\n\n")
	b.WriteString("// groupNames are the API groups the catalog holds CRDs of, sorted.\nvar groupNames = [...]string{\n")
	for _, g := range groups {
		fmt.Fprintf(&b, "\t%q,\n", g)
	}
	b.WriteString("}\n")
	return b.Bytes()
}

// conditions writes a source's template conditions, sorted.
func conditions(conds map[string]bool) string {
	var parts []string
	for _, k := range sortedKeys(conds) {
		parts = append(parts, fmt.Sprintf("%s=%v", k, conds[k]))
	}
	return strings.Join(parts, ", ")
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
