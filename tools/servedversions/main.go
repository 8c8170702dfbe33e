// Command servedversions writes admit/servedversions/zz_generated.go: the
// group/version/kinds that kube-apiserver serves by default at each
// Kubernetes minor kiln supports, read from the sources of k8s.io/kubernetes
// v1.N.0 and k8s.io/apiserver v0.N.0.
//
// A maintainer runs it (go generate ./admit/servedversions) when a new
// Kubernetes minor comes out; it downloads the modules through the Go module
// proxy (go mod download). kiln never runs it and no test downloads anything.
//
// For each release it reads:
//   - api/openapi-spec/swagger.json, which the release generates with every
//     API version enabled: the resources that exist and the kind of each;
//   - DefaultAPIResourceConfigSource (pkg/master, later pkg/controlplane):
//     the group versions and resources enabled by default, such as the beta
//     resources kept on by legacyBetaEnabledByDefaultResources, evaluated with
//     the rules of that release's k8s.io/apiserver ResourceConfig;
//   - the REST storage providers (pkg/registry/<group>/rest): which resources
//     each version registers and under which conditions (the resource
//     config, feature gates, whose defaults come from pkg/features).
//
// A resource is served when the config enables it and its provider
// registers it under conditions that hold with the defaults. Two kinds of
// group have no provider there: the core group (v1), whose resources are
// served when the config enables them, and the groups of
// apiextensions-apiserver and kube-aggregator (apiextensions.k8s.io,
// apiregistration.k8s.io), which serve every version they have.
package main

import (
	"bytes"
	"cmp"
	"encoding/json"
	"flag"
	"fmt"
	"go/format"
	"go/printer"
	"go/token"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/version"

	"github.com/kilnhq/kiln/manifest"
)

func main() {
	out := flag.String("o", "zz_generated.go", "the file to write")
	from := flag.Int("from", manifest.OldestKube.Minor, "the oldest Kubernetes 1.x minor")
	to := flag.Int("to", manifest.LatestKube.Minor, "the newest Kubernetes 1.x minor")
	verbose := flag.Bool("v", false, "also print the conditions taken as true and the resources left out")
	flag.Parse()
	log := io.Discard
	if *verbose {
		log = os.Stderr
	}
	if err := run(*out, *from, *to, log); err != nil {
		fmt.Fprintln(os.Stderr, "servedversions:", err)
		os.Exit(1)
	}
}

func run(out string, from, to int, log io.Writer) error {
	var releases []release
	for minor := from; minor <= to; minor++ {
		kube, err := download("k8s.io/kubernetes", fmt.Sprintf("v1.%d.0", minor))
		if err != nil {
			return err
		}
		// k8s.io/apiserver is published from v0.17.0; 1.16 is read with 1.17's.
		apiserver, err := download("k8s.io/apiserver", fmt.Sprintf("v0.%d.0", max(minor, 17)))
		if err != nil {
			return err
		}
		r := release{Minor: minor, Kube: kube, APIServer: apiserver}
		if r.expires() {
			if r.API, err = download("k8s.io/api", fmt.Sprintf("v0.%d.0", minor)); err != nil {
				return err
			}
		}
		releases = append(releases, r)
	}
	src, err := generate(releases, log)
	if err != nil {
		return err
	}
	return os.WriteFile(out, src, 0o644)
}

// download puts module@version in the module cache and returns its directory.
func download(module, version string) (string, error) {
	cmd := exec.Command("go", "mod", "download", "-json", module+"@"+version)
	cmd.Dir = os.TempDir() // outside any module
	var stdout bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, os.Stderr
	runErr := cmd.Run()
	var res struct{ Dir, Error string }
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil || res.Error != "" || res.Dir == "" {
		return "", fmt.Errorf("go mod download %s@%s: %v %s", module, version, runErr, res.Error)
	}
	return res.Dir, nil
}

// release is one Kubernetes minor's sources.
type release struct {
	Minor     int
	Kube      string // the k8s.io/kubernetes module directory
	APIServer string // the k8s.io/apiserver module directory
	API       string // the k8s.io/api module directory, when expires
}

// expires reports whether the release's API server stops serving the kinds
// that k8s.io/api marks as removed (pkg/server/deleted_kinds.go).
func (r release) expires() bool {
	return exists(filepath.Join(r.APIServer, "pkg", "server", "deleted_kinds.go"))
}

type groupVersionKind struct{ Group, Version, Kind string }

// found is what one release says of a group/version/kind.
type found struct {
	Resource string
	Served   bool
}

// readRelease returns the kinds of one release, served by default or not.
// kindOf names the kinds of resources that the release's swagger.json
// leaves out, from other releases.
func readRelease(r release, resources []resourceKind, kindOf map[groupVersionResource]string, log io.Writer) (map[groupVersionKind]found, error) {
	s, err := readSources(r, log)
	if err != nil {
		return nil, err
	}
	out := map[groupVersionKind]found{}
	inSwagger := map[groupVersionResource]bool{}
	for _, rk := range resources {
		inSwagger[rk.groupVersionResource] = true
		served, err := s.served(rk)
		if err != nil {
			return nil, err
		}
		key := groupVersionKind{rk.Group, rk.Version, rk.Kind}
		if prev, ok := out[key]; ok && prev.Resource != rk.Resource {
			// Two resources of one kind (ReplicationController and its
			// extensions/v1beta1 stand-in for scale): the served one counts.
			if prev.Served || !served {
				continue
			}
		}
		out[key] = found{Resource: rk.Resource, Served: served}
	}
	if err := s.checkUnlisted(inSwagger, kindOf); err != nil {
		return nil, err
	}
	return out, nil
}

// releaseSources is what one release's sources say about serving: the
// default resource config, the storage providers' registrations (also by
// group) and the kinds k8s.io/api marks removed, with the minor each is
// removed in (when the release expires them).
type releaseSources struct {
	r       release
	cfg     *resourceConfig
	regs    []registration
	byGroup map[string][]registration
	removed map[groupVersionKind]int
	log     io.Writer
}

// readSources reads a release's API server semantics, default resource
// config, feature gates, storage providers and removals.
func readSources(r release, log io.Writer) (*releaseSources, error) {
	fset := token.NewFileSet()
	sem, err := readSemantics(fset, r.APIServer)
	if err != nil {
		return nil, err
	}
	e := &exprs{groups: &groupNames{kube: r.Kube, fset: fset, cache: map[string]string{}}}
	cfg, err := defaultConfig(fset, r.Kube, e, sem)
	if err != nil {
		return nil, err
	}
	g, err := readGates(fset, r.Kube, r.Minor)
	if err != nil {
		return nil, err
	}
	regs, err := providers(fset, r.Kube, e, cfg, g)
	if err != nil {
		return nil, err
	}
	s := &releaseSources{r: r, cfg: cfg, regs: regs, byGroup: map[string][]registration{}, log: log}
	if r.expires() {
		if s.removed, err = removals(fset, r.API, e.groups); err != nil {
			return nil, err
		}
	}
	for _, reg := range regs {
		s.byGroup[reg.Group] = append(s.byGroup[reg.Group], reg)
	}
	return s, nil
}

// served reports whether the release serves a resource of swagger.json
// by default: the core group's when the config enables it, the
// apiextensions and aggregator groups' always, another group's when a
// provider registers it under conditions that hold and the config enables
// it; never one k8s.io/api marks removed by this release. A resource no
// provider registers is an error.
func (s *releaseSources) served(rk resourceKind) (bool, error) {
	var served bool
	switch regs, ok := s.byGroup[rk.Group]; {
	case rk.Group == "":
		served = s.cfg.resourceEnabled(rk.groupVersionResource)
	case rk.Group == "apiextensions.k8s.io" || rk.Group == "apiregistration.k8s.io":
		served = true
	case !ok:
		return false, fmt.Errorf("1.%d: swagger.json has %s/%s %s, but no storage provider serves group %q", s.r.Minor, rk.Group, rk.Version, rk.Resource, rk.Group)
	default:
		on, err := s.registeredOn(rk, regs)
		if err != nil {
			return false, err
		}
		served = on && s.cfg.resourceEnabled(rk.groupVersionResource)
	}
	key := groupVersionKind{rk.Group, rk.Version, rk.Kind}
	if minor, ok := s.removed[key]; ok && minor <= s.r.Minor && served {
		fmt.Fprintf(s.log, "1.%d: %s/%s %s: registered, but k8s.io/api marks it removed in 1.%d\n", s.r.Minor, rk.Group, rk.Version, rk.Kind, minor)
		served = false
	}
	return served, nil
}

// registeredOn reports whether one of its group's registrations (regs)
// registers the resource under conditions that hold, noting those taken
// as true; none registering it at all is an error.
func (s *releaseSources) registeredOn(rk resourceKind, regs []registration) (bool, error) {
	registered, on := false, false
	for _, reg := range regs {
		if reg.Resource == rk.Resource && (reg.Version == rk.Version || reg.Version == "") {
			registered, on = true, on || reg.on
			for _, a := range reg.assumed {
				fmt.Fprintf(s.log, "1.%d: %s/%s %s (%s): condition taken as true: %s\n", s.r.Minor, rk.Group, rk.Version, rk.Resource, reg.where, a)
			}
		}
	}
	if !registered {
		return false, fmt.Errorf("1.%d: swagger.json has %s/%s %s, but no storage provider registers it", s.r.Minor, rk.Group, rk.Version, rk.Resource)
	}
	return on, nil
}

// checkUnlisted checks the registrations of a version that swagger.json
// does not list: each must be off by default (or removed), as the release
// generates swagger.json with every version it serves; the log notes
// each one left out.
func (s *releaseSources) checkUnlisted(inSwagger map[groupVersionResource]bool, kindOf map[groupVersionResource]string) error {
	minor := s.r.Minor
	for _, reg := range s.regs {
		if reg.Version == "" || inSwagger[reg.groupVersionResource] {
			continue
		}
		kind, ok := kindOf[reg.groupVersionResource]
		if at, gone := s.removed[groupVersionKind{reg.Group, reg.Version, kind}]; ok && gone && at <= minor {
			fmt.Fprintf(s.log, "1.%d: %s: %s/%s %s: registered, but k8s.io/api marks it removed in 1.%d\n", minor, reg.where, reg.Group, reg.Version, reg.Resource, at)
			continue
		}
		if reg.on && s.cfg.resourceEnabled(reg.groupVersionResource) {
			return fmt.Errorf("1.%d: %s: %s/%s %s is served by default but swagger.json does not list it", minor, reg.where, reg.Group, reg.Version, reg.Resource)
		}
		fmt.Fprintf(s.log, "1.%d: %s: %s/%s %s: off by default and not in swagger.json, left out\n", minor, reg.where, reg.Group, reg.Version, reg.Resource)
	}
	return nil
}

// generate reads every release and renders the Go table.
func generate(releases []release, log io.Writer) ([]byte, error) {
	if len(releases) == 0 {
		return nil, fmt.Errorf("no release to read")
	}
	type history struct {
		resource       string
		exists, served []int
	}
	swaggers := make([][]resourceKind, len(releases))
	kindOf := map[groupVersionResource]string{}
	for i, r := range releases {
		var err error
		if swaggers[i], err = swaggerResources(r.Kube); err != nil {
			return nil, err
		}
		for _, rk := range swaggers[i] {
			kindOf[rk.groupVersionResource] = rk.Kind
		}
	}
	all := map[groupVersionKind]*history{}
	for i, r := range releases {
		kinds, err := readRelease(r, swaggers[i], kindOf, log)
		if err != nil {
			return nil, err
		}
		for k, f := range kinds {
			h := all[k]
			if h == nil {
				h = &history{}
				all[k] = h
			}
			h.resource = f.Resource
			h.exists = append(h.exists, r.Minor)
			if f.Served {
				h.served = append(h.served, r.Minor)
			}
		}
	}
	keys := slices.SortedFunc(maps.Keys(all), func(a, b groupVersionKind) int {
		// Within a kind, the newest version first.
		return cmp.Or(cmp.Compare(a.Group, b.Group), cmp.Compare(a.Kind, b.Kind), version.CompareKubeAwareVersionStrings(b.Version, a.Version))
	})
	var b bytes.Buffer
	first, last := releases[0], releases[len(releases)-1]
	fmt.Fprintf(&b, "// Code generated by go run ./tools/servedversions; DO NOT EDIT.\n\n")
	fmt.Fprintf(&b, "package servedversions\n\n")
	fmt.Fprintf(&b, "// First and Last are the Kubernetes 1.x minors the table covers, read from\n")
	fmt.Fprintf(&b, "// k8s.io/kubernetes v1.%d.0 to v1.%d.0.\n", first.Minor, last.Minor)
	fmt.Fprintf(&b, "const (\n\tFirst = %d\n\tLast = %d\n)\n\n", first.Minor, last.Minor)
	fmt.Fprintf(&b, "var table = []Entry{\n")
	for _, k := range keys {
		h := all[k]
		exists, err := span(h.exists)
		if err != nil {
			return nil, fmt.Errorf("%s/%s %s exists in %v", k.Group, k.Version, k.Kind, err)
		}
		served, err := span(h.served)
		if err != nil {
			return nil, fmt.Errorf("%s/%s %s is served in %v", k.Group, k.Version, k.Kind, err)
		}
		fmt.Fprintf(&b, "\t{Group: %q, Version: %q, Kind: %q, Resource: %q, Exists: %s, Served: %s},\n", k.Group, k.Version, k.Kind, h.resource, exists, served)
	}
	fmt.Fprintf(&b, "}\n")
	return format.Source(b.Bytes())
}

// span writes the minors as Span{From, To}; they must follow each other.
func span(minors []int) (string, error) {
	if len(minors) == 0 {
		return "Span{}", nil
	}
	for i := 1; i < len(minors); i++ {
		if minors[i] != minors[i-1]+1 {
			return "", fmt.Errorf("1.%s, which are not consecutive minors", strings.Trim(strings.Join(strings.Fields(fmt.Sprint(minors)), ", 1."), "[]"))
		}
	}
	return fmt.Sprintf("Span{%d, %d}", minors[0], minors[len(minors)-1]), nil
}

// exprString prints an expression for notes.
func exprString(fset *token.FileSet, x any) string {
	var b bytes.Buffer
	printer.Fprint(&b, fset, x)
	return strings.Join(strings.Fields(b.String()), " ")
}
