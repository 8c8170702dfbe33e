package discover

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/fluxcd/pkg/apis/meta"
	fluxchartutil "github.com/fluxcd/pkg/chartutil"
	"github.com/go-logr/logr"
	"github.com/kilnhq/kiln/discover/charts"
	"github.com/kilnhq/kiln/discover/rendercache"
	"github.com/kilnhq/kiln/internal/pathkey"
	"github.com/kilnhq/kiln/internal/yamlnode"
	"github.com/kilnhq/kiln/manifest"
	"helm.sh/helm/v4/pkg/chart/common"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"
	kubeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/kustomize/kyaml/yaml"
	sigsyaml "sigs.k8s.io/yaml"
)

// The Flux group a HelmRelease is in, and the labels helm-controller's
// origin post-renderer puts on every object of a release.
const (
	helmGroup          = "helm.toolkit.fluxcd.io"
	originNameLabel    = helmGroup + "/name"
	originNamespaceLbl = helmGroup + "/namespace"
)

// IsHelmRelease reports whether o is a Flux HelmRelease (v2, or a v2beta
// version still found in repositories).
func IsHelmRelease(o *manifest.Object) bool {
	return o.Kind == "HelmRelease" && strings.HasPrefix(o.APIVersion, helmGroup+"/")
}

// HelmReleases is what rendering a run's HelmReleases gave.
type HelmReleases struct {
	// Units hold each release's objects (Kind "helmrelease"), or the
	// errors that kept it from rendering.
	Units []*Unit
	// Charts are the chart sources the releases name, cached or not:
	// what `kiln fetch` downloads.
	Charts []charts.Source
	// Missing are those of Charts the cache lacks.
	Missing []charts.Source
	// Warnings are what rendering could not do but is no input error.
	Warnings []error
	// Loaded counts the chart versions loaded and parsed: once each per
	// call, however many releases install them.
	Loaded int
}

// RenderHelmReleases renders every HelmRelease among releases as
// helm-controller renders it, from kiln's chart cache (never the
// network): the chart its chartRef or chart.spec names, resolved through
// the sources in context (HelmRepository, OCIRepository, HelmChart,
// GitRepository); values merged over valuesFrom (the ConfigMaps and
// Secrets in context) by fluxcd/pkg/chartutil; releaseName,
// targetNamespace, install.crds, postRenderers and commonMetadata. The
// Flux Kustomization builder calls it on what its builds output; Discover
// calls it on the input's files and rendered units.
func RenderHelmReleases(releases, context []*manifest.Object, opts Options) *HelmReleases {
	out := &HelmReleases{}
	r := &releaseRenderer{opts: opts, ctx: newFluxContext(context), out: out, parsed: map[string]*chart.Chart{}}
	r.ctx.onFind = r.recordFind
	if opts.Charts != nil {
		r.cache = opts.Charts
	} else if c, err := charts.Open(""); err == nil {
		r.cache = c
	}
	seen := map[string]bool{}
	for _, o := range releases {
		if !IsHelmRelease(o) {
			continue
		}
		u := r.renderCached(o)
		if !seen[u.Dir] {
			seen[u.Dir] = true
			out.Units = append(out.Units, u)
		}
	}
	return out
}

// fluxContext finds the objects a HelmRelease names, by kind, namespace and name.
type fluxContext struct {
	byName map[string][]*manifest.Object // "Kind/name"
	// onFind, when set, is told of each lookup and what it found (the
	// render cache's dependencies of a release).
	onFind func(kind, ns, name string, o *manifest.Object)
}

func newFluxContext(objs []*manifest.Object) *fluxContext {
	c := &fluxContext{byName: map[string][]*manifest.Object{}}
	for _, o := range objs {
		k := o.Kind + "/" + o.Name
		c.byName[k] = append(c.byName[k], o)
	}
	return c
}

// find returns the object of kind named name in namespace ns (an object
// without a namespace matches any: a Flux Kustomization may set it).
func (c *fluxContext) find(kind, ns, name string) *manifest.Object {
	o := c.lookup(kind, ns, name)
	if c.onFind != nil {
		c.onFind(kind, ns, name, o)
	}
	return o
}

// lookup is find without its hook.
func (c *fluxContext) lookup(kind, ns, name string) *manifest.Object {
	var loose *manifest.Object
	for _, o := range c.byName[kind+"/"+name] {
		if o.Namespace == ns {
			return o
		}
		if o.Namespace == "" && loose == nil {
			loose = o
		}
	}
	return loose
}

// helmRelease is the part of a HelmRelease (helm.toolkit.fluxcd.io/v2)
// that decides what it renders.
type helmRelease struct {
	Spec struct {
		ReleaseName     string `json:"releaseName"`
		TargetNamespace string `json:"targetNamespace"`
		Chart           *struct {
			Spec chartSpec `json:"spec"`
		} `json:"chart"`
		ChartRef       *crossRef              `json:"chartRef"`
		Values         map[string]any         `json:"values"`
		ValuesFrom     []meta.ValuesReference `json:"valuesFrom"`
		CommonMetadata *struct {
			Labels      map[string]string `json:"labels"`
			Annotations map[string]string `json:"annotations"`
		} `json:"commonMetadata"`
		Install *struct {
			CRDs string `json:"crds"`
		} `json:"install"`
		PostRenderers []struct {
			Kustomize *kustomizePostRenderer `json:"kustomize"`
		} `json:"postRenderers"`
	} `json:"spec"`
}

type chartSpec struct {
	Chart     string   `json:"chart"`
	Version   string   `json:"version"`
	SourceRef crossRef `json:"sourceRef"`
}

type crossRef struct {
	Kind      string `json:"kind"`
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
}

// releaseRenderer renders the HelmReleases of one call.
type releaseRenderer struct {
	opts   Options
	ctx    *fluxContext
	cache  *charts.Cache
	out    *HelmReleases
	parsed map[string]*chart.Chart // a chart by digest or folder, loaded and parsed once per call
	// deps records what the release rendering now reads, for the render
	// cache (nil: nothing recorded).
	deps *rendercache.Deps
}

// load returns the chart parsed under key, parsing it with parse the first
// time, as a copy each release may change (chartCopy).
func (r *releaseRenderer) load(key string, parse func() (*chart.Chart, error)) (*chart.Chart, error) {
	ch, ok := r.parsed[key]
	if !ok {
		var err error
		if ch, err = parse(); err != nil {
			return nil, err
		}
		r.parsed[key] = ch
		r.out.Loaded++
	}
	return chartCopy(ch), nil
}

// readRelease reads what decides what a HelmRelease renders, and the
// nodes of its values and valuesFrom (nil when it has none).
func readRelease(o *manifest.Object) (hr helmRelease, valuesNode, fromNode *yaml.Node, err error) {
	content, err := o.Content()
	if err != nil {
		return hr, nil, nil, err
	}
	data, _ := json.Marshal(content)
	if err := json.Unmarshal(data, &hr); err != nil {
		return hr, nil, nil, fmt.Errorf("cannot read its spec: %v", err)
	}
	if spec := yamlnode.Value(o.Node(), "spec"); spec != nil {
		valuesNode = yamlnode.Value(spec, "values")
		fromNode = yamlnode.Value(spec, "valuesFrom")
	}
	return hr, valuesNode, fromNode, nil
}

// releaseEdits are what helm-controller changes in each object a release
// renders: its origin labels (its post-renderer, after the user's),
// commonMetadata, and the release namespace.
func releaseEdits(o *manifest.Object, ns, relNS string, hr *helmRelease) []func(*yaml.Node) {
	labels := map[string]string{originNameLabel: o.Name, originNamespaceLbl: ns}
	annotations := map[string]string{}
	if cm := hr.Spec.CommonMetadata; cm != nil {
		for k, v := range cm.Labels {
			labels[k] = v
		}
		for k, v := range cm.Annotations {
			annotations[k] = v
		}
	}
	return []func(*yaml.Node){func(n *yaml.Node) {
		setMetadata(n, "labels", labels)
		setMetadata(n, "annotations", annotations)
		releaseNamespace(n, relNS)
	}}
}

// placeAtValues places the objects of a chart from the chart cache (whose
// files are not the user's) in the HelmRelease's file: at the values
// line (of spec.values or a valuesFrom ConfigMap) that set them, else at
// the release.
func (r *releaseRenderer) placeAtValues(cr *chartRender, o *manifest.Object, ns string, hr *helmRelease, valuesNode, fromNode *yaml.Node) {
	trace := newValueTrace(valuesNode)
	trace.addFrom(r.valuesFromTrace(ns, hr, fromNode))
	cr.crdFile = func(string) string { return o.File }
	cr.place = func(string, string) (string, func(*yaml.Node)) {
		return o.File, func(n *yaml.Node) { trace.place(n, o.Pos()) }
	}
}

// releaseUnitDir names the unit of a HelmRelease: one HelmRelease file may be
// built by several kustomizations (overlays patching it differently), and
// each build's copy is a release of its own.
func releaseUnitDir(o *manifest.Object) string {
	return manifest.UnitOf(o) + "#" + orDefault(o.Namespace, "default") + "/" + o.Name
}

// render renders one HelmRelease into its unit.
func (r *releaseRenderer) render(o *manifest.Object) *Unit {
	ns := o.Namespace
	if ns == "" {
		ns = "default"
	}
	id := "HelmRelease " + ns + "/" + o.Name
	if o.Unit != "" {
		id += " (as " + o.Unit + " builds it)"
	}
	src := &manifest.Source{Path: o.File}
	// One HelmRelease file may be built by several kustomizations (overlays
	// patching it differently): each build's copy is a release of its own.
	u := &Unit{Kind: "helmrelease", Dir: releaseUnitDir(o), Source: src}
	fail := func(format string, args ...any) *Unit {
		src.Errs = append(src.Errs, &manifest.Error{Pos: o.Pos(), Msg: id + ": " + fmt.Sprintf(format, args...)})
		return u
	}
	hr, valuesNode, fromNode, err := readRelease(o)
	if err != nil {
		return fail("%v", err)
	}
	ch, chartDir, err := r.chart(o, ns, &hr)
	if err != nil {
		return fail("%v", err)
	}
	values, warn, err := r.values(ns, &hr)
	for _, w := range warn {
		r.out.Warnings = append(r.out.Warnings, &manifest.Error{Pos: o.Pos(), Msg: "warning: " + id + ": " + w})
	}
	if err != nil {
		return fail("%v", err)
	}
	relNS := ns
	if hr.Spec.TargetNamespace != "" {
		relNS = hr.Spec.TargetNamespace
	}
	rel := common.ReleaseOptions{Name: releaseName(o.Name, &hr), Namespace: relNS, Revision: 1, IsInstall: true}
	unit := u.Dir
	edits := releaseEdits(o, ns, relNS, &hr)

	cr := chartRender{
		ch: ch, vals: values, rel: rel, kube: r.opts.KubeVersion, unit: unit, pos: o.Pos(),
		crds:  hr.Spec.Install == nil || (hr.Spec.Install.CRDs != "Skip"),
		notes: &r.out.Warnings, edit: edits,
		valuesErr: func(err error) error {
			v := violations(ch, err)
			return &manifest.Error{Pos: valuesPos(o, valuesNode, v), Msg: id + ": its values do not meet the chart's values.schema.json (" + strings.Join(v, "; ") + ")"}
		},
		templateErr: func(err error) error {
			return &manifest.Error{Pos: o.Pos(), Msg: id + ": chart " + strconv.Quote(ch.Name()) + " cannot render: " + strings.TrimSpace(err.Error())}
		},
	}
	if chartDir != "" {
		cr.crdFile = func(name string) string { return diskPath(chartDir, name) }
		cr.place = func(name, text string) (string, func(*yaml.Node)) {
			lines := traceLines(text, templateOf(ch, name))
			return diskPath(chartDir, name), func(n *yaml.Node) { mapLines(n, lines) }
		}
	} else {
		r.placeAtValues(&cr, o, ns, &hr, valuesNode, fromNode)
	}
	if pr := postRenderers(&hr); len(pr) > 0 {
		cr.post = func(objs []*manifest.Object) ([]*manifest.Object, error) {
			return applyPostRenderers(objs, pr, o, unit, edits)
		}
	}
	renderLoaded(src, cr)
	// Findings on what the release renders name it, and its
	// kiln.dev/ignore applies to them, as for a Flux Kustomization's.
	// They deploy into the cluster the HelmRelease is deployed into.
	for _, ro := range src.Objects {
		ro.Via, ro.ViaIgnore = "HelmRelease "+ns+"/"+o.Name, o.Annotations["kiln.dev/ignore"]
		ro.Cluster = manifest.ClusterOf(o)
	}
	return u
}

// secretRef names a Flux source with its spec.secretRef, "" when it has
// none (charts.Source.SecretRef).
func secretRef(s *manifest.Object) string {
	c, _ := s.Content()
	name, _ := nestedString(c, "spec", "secretRef", "name")
	if name == "" {
		return ""
	}
	return fmt.Sprintf("%s %s/%s, Secret %s", s.Kind, orDefault(s.Namespace, "default"), s.Name, name)
}

// releaseName is helm-controller's name for the release: spec.releaseName,
// else [targetNamespace-]name, shortened to 53 characters with a hash as
// helm-controller's release.ShortenName does.
func releaseName(name string, hr *helmRelease) string {
	n := hr.Spec.ReleaseName
	if n == "" {
		n = name
		if hr.Spec.TargetNamespace != "" {
			n = hr.Spec.TargetNamespace + "-" + name
		}
	}
	if len(n) <= 53 {
		return n
	}
	sum := sha256.Sum256([]byte(n))
	return strings.ToLower(n[:40] + "-" + hex.EncodeToString(sum[:])[:12])
}

// chart loads the chart a release names: from the cache for a Helm or OCI
// repository (noting the source for kiln fetch), from this repository's
// files for a GitRepository (its directory returned).
func (r *releaseRenderer) chart(o *manifest.Object, ns string, hr *helmRelease) (*chart.Chart, string, error) {
	var spec chartSpec
	switch {
	case hr.Spec.ChartRef != nil:
		ref := *hr.Spec.ChartRef
		refNS := orDefault(ref.Namespace, ns)
		switch ref.Kind {
		case "OCIRepository":
			s := r.ctx.find("OCIRepository", refNS, ref.Name)
			if s == nil {
				return nil, "", fmt.Errorf("its chartRef OCIRepository %s/%s is not in the input", refNS, ref.Name)
			}
			src, err := ociRepositorySource(s)
			if err != nil {
				return nil, "", err
			}
			src.SecretRef = secretRef(s)
			return r.cached(src)
		case "HelmChart":
			s := r.ctx.find("HelmChart", refNS, ref.Name)
			if s == nil {
				return nil, "", fmt.Errorf("its chartRef HelmChart %s/%s is not in the input", refNS, ref.Name)
			}
			c, _ := s.Content()
			data, _ := json.Marshal(c)
			var hc struct {
				Spec chartSpec `json:"spec"`
			}
			if err := json.Unmarshal(data, &hc); err != nil {
				return nil, "", fmt.Errorf("HelmChart %s/%s: %v", refNS, ref.Name, err)
			}
			spec, ns = hc.Spec, orDefault(s.Namespace, refNS)
		default:
			return nil, "", fmt.Errorf("chartRef kind %q is not one helm-controller reads (OCIRepository, HelmChart)", ref.Kind)
		}
	case hr.Spec.Chart != nil:
		spec = hr.Spec.Chart.Spec
	default:
		return nil, "", errors.New("it names no chart (spec.chart or spec.chartRef)")
	}
	srcNS := orDefault(spec.SourceRef.Namespace, ns)
	switch spec.SourceRef.Kind {
	case "HelmRepository":
		s := r.ctx.find("HelmRepository", srcNS, spec.SourceRef.Name)
		if s == nil {
			return nil, "", fmt.Errorf("its chart's source HelmRepository %s/%s is not in the input", srcNS, spec.SourceRef.Name)
		}
		c, _ := s.Content()
		url, _ := nestedString(c, "spec", "url")
		typ, _ := nestedString(c, "spec", "type")
		insecure, _ := nestedBool(c, "spec", "insecure")
		if typ == "oci" || strings.HasPrefix(url, "oci://") {
			return r.cached(charts.Source{Type: "oci", URL: strings.TrimSuffix(url, "/") + "/" + spec.Chart, Version: spec.Version, PlainHTTP: insecure, SecretRef: secretRef(s)})
		}
		return r.cached(charts.Source{Type: "http", URL: url, Chart: spec.Chart, Version: spec.Version, SecretRef: secretRef(s)})
	case "GitRepository":
		return r.gitChart(o, srcNS, spec)
	default:
		return nil, "", fmt.Errorf("its chart's source kind %q is not rendered (kiln reads HelmRepository, OCIRepository, HelmChart and GitRepository)", spec.SourceRef.Kind)
	}
}

// gitChart loads the chart at spec.chart of a GitRepository that is this
// repository (or a folder .kiln.yaml maps it to), and returns its folder.
func (r *releaseRenderer) gitChart(o *manifest.Object, srcNS string, spec chartSpec) (*chart.Chart, string, error) {
	root, ok := "", false
	if r.opts.GitSource != nil {
		root, ok = r.opts.GitSource(srcNS, spec.SourceRef.Name, o.File)
	}
	r.recordGit(srcNS, spec.SourceRef.Name, o.File, root, ok)
	if !ok {
		return nil, "", fmt.Errorf("its chart is in GitRepository %s/%s, which kiln does not know to be this repository (map it to a folder in flux.sources in .kiln.yaml)", srcNS, spec.SourceRef.Name)
	}
	dir := filepath.Join(root, filepath.FromSlash(spec.Chart))
	if r.deps != nil {
		chartTrees(r.deps, r.opts.renders, dir, map[string]bool{})
	}
	ch, err := r.load("dir:"+pathkey.Real(dir), func() (*chart.Chart, error) {
		ch, err := loader.LoadDir(dir)
		if err != nil {
			return nil, fmt.Errorf("cannot load the chart %s: %v", dir, err)
		}
		if missing := resolveDependencies(ch, dir); len(missing) > 0 {
			return nil, fmt.Errorf("chart %q needs dependency %q (repository %q), which is not in %s/charts", ch.Name(), missing[0].name, missing[0].repo, dir)
		}
		return ch, nil
	})
	if err != nil {
		return nil, "", err
	}
	return ch, dir, nil
}

// ociRepositorySource reads an OCIRepository's URL, ref and insecure.
func ociRepositorySource(s *manifest.Object) (charts.Source, error) {
	c, err := s.Content()
	if err != nil {
		return charts.Source{}, err
	}
	url, _ := nestedString(c, "spec", "url")
	src := charts.Source{Type: "oci", URL: url}
	src.Tag, _ = nestedString(c, "spec", "ref", "tag")
	src.Version, _ = nestedString(c, "spec", "ref", "semver")
	src.SemverFilter, _ = nestedString(c, "spec", "ref", "semverFilter")
	src.Digest, _ = nestedString(c, "spec", "ref", "digest")
	src.PlainHTTP, _ = nestedBool(c, "spec", "insecure")
	if url == "" {
		return src, fmt.Errorf("OCIRepository %s/%s has no spec.url", s.Namespace, s.Name)
	}
	return src, nil
}

// cached loads a chart version from the cache, noting its source.
func (r *releaseRenderer) cached(src charts.Source) (*chart.Chart, string, error) {
	r.out.Charts = append(r.out.Charts, src)
	if r.cache == nil {
		r.out.Missing = append(r.out.Missing, src)
		return nil, "", fmt.Errorf("chart %s: kiln has no chart cache here: run `kiln fetch`", src)
	}
	c, err := r.cache.Lookup(src)
	if err != nil {
		if charts.IsNotCached(err) {
			r.out.Missing = append(r.out.Missing, src)
			return nil, "", fmt.Errorf("chart %s is not in kiln's chart cache (%v): run `kiln fetch` first (kiln lint never downloads)", src, err)
		}
		return nil, "", fmt.Errorf("chart %s: %v", src, err)
	}
	r.recordChart(src, c.Digest)
	ch, err := r.load("sha256:"+c.Digest, func() (*chart.Chart, error) {
		data, err := os.ReadFile(c.Path)
		if err != nil {
			return nil, err
		}
		ch, err := loader.LoadArchive(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("chart %s version %s: %v", src, c.Version, err)
		}
		return ch, nil
	})
	if err != nil {
		return nil, "", err
	}
	return ch, "", nil
}

// values merges spec.values over spec.valuesFrom with helm-controller's
// own code (fluxcd/pkg/chartutil), reading the ConfigMaps and Secrets of
// the input. A reference to a SOPS-encrypted Secret (whose values kiln
// cannot know) is left out and said.
func (r *releaseRenderer) values(ns string, hr *helmRelease) (map[string]any, []string, error) {
	var refs []meta.ValuesReference
	var warn []string
	for _, ref := range hr.Spec.ValuesFrom {
		if ref.Kind == "Secret" {
			if s := r.ctx.find("Secret", ns, ref.Name); s != nil {
				if c, _ := s.Content(); c["sops"] != nil {
					warn = append(warn, fmt.Sprintf("valuesFrom Secret %s/%s is SOPS-encrypted: its values are unknown to kiln and left out", ns, ref.Name))
					continue
				}
			}
		}
		refs = append(refs, ref)
	}
	vals := hr.Spec.Values
	if vals == nil {
		vals = map[string]any{}
	}
	merged, err := fluxchartutil.ChartValuesFromReferences(context.Background(), logr.Discard(), inputClient{ctx: r.ctx}, ns, vals, refs...)
	if err != nil {
		return nil, warn, fmt.Errorf("valuesFrom: %v", err)
	}
	return merged.AsMap(), warn, nil
}

// inputClient answers helm-controller's reads of ConfigMaps and Secrets
// from the objects of the input; it is the only method chartutil calls.
type inputClient struct {
	kubeclient.Client // nil: chartutil calls only Get
	ctx               *fluxContext
}

// Get reads a ConfigMap or Secret of the input into obj.
func (c inputClient) Get(_ context.Context, key kubeclient.ObjectKey, obj kubeclient.Object, _ ...kubeclient.GetOption) error {
	kind := ""
	switch obj.(type) {
	case *corev1.ConfigMap:
		kind = "ConfigMap"
	case *corev1.Secret:
		kind = "Secret"
	default:
		return fmt.Errorf("kiln reads only ConfigMaps and Secrets for valuesFrom, not %T", obj)
	}
	o := c.ctx.find(kind, key.Namespace, key.Name)
	if o == nil {
		return apierrors.NewNotFound(k8sschema.GroupResource{Resource: strings.ToLower(kind) + "s"}, key.Name)
	}
	content, err := o.Content()
	if err != nil {
		return err
	}
	data, err := json.Marshal(content)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, obj); err != nil {
		return fmt.Errorf("%s %s/%s: %v", kind, key.Namespace, key.Name, err)
	}
	if s, ok := obj.(*corev1.Secret); ok && len(s.StringData) > 0 {
		if s.Data == nil {
			s.Data = map[string][]byte{}
		}
		for k, v := range s.StringData {
			s.Data[k] = []byte(v) // as the API server stores stringData
		}
	}
	return nil
}

func nestedString(m map[string]any, path ...string) (string, bool) {
	v, ok := nested(m, path...)
	s, isStr := v.(string)
	return s, ok && isStr
}

func nestedBool(m map[string]any, path ...string) (bool, bool) {
	v, ok := nested(m, path...)
	b, isBool := v.(bool)
	return b, ok && isBool
}

func nested(m map[string]any, path ...string) (any, bool) {
	var cur any = m
	for _, p := range path {
		mm, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = mm[p]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// builtinKinds is the table of built-in kinds, built on first use.
var builtinKinds = sync.OnceValue(manifest.BuiltinKinds)

// releaseNamespace puts the release's namespace on a namespaced built-in
// object that names none, as Helm's kube client does when helm-controller
// installs it (helm template leaves it out): Pod Security and duplicates
// are then judged in the namespace the object lands in. A custom
// resource's scope is not known here and it is left as rendered.
func releaseNamespace(n *yaml.Node, ns string) {
	if n == nil || n.Kind != yaml.MappingNode {
		return
	}
	gv, err := k8sschema.ParseGroupVersion(yamlnode.Scalar(yamlnode.Value(n, "apiVersion")))
	if err != nil {
		return
	}
	r, ok := builtinKinds().Lookup(gv.WithKind(yamlnode.Scalar(yamlnode.Value(n, "kind"))))
	if !ok || !r.Namespaced || r.CRD {
		return
	}
	md := yamlnode.Value(n, "metadata")
	if md == nil || md.Kind != yaml.MappingNode || yamlnode.Scalar(yamlnode.Value(md, "namespace")) != "" {
		return
	}
	if v := yamlnode.Value(md, "namespace"); v != nil {
		v.Value, v.Tag = ns, "!!str"
		return
	}
	md.Content = append(md.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: "namespace"}, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: ns})
}

// setMetadata sets entries of metadata.<field> of an object node, over
// the chart's own, as helm-controller's origin-labels and commonMetadata
// post-renderers do.
func setMetadata(n *yaml.Node, field string, add map[string]string) {
	if len(add) == 0 || n == nil || n.Kind != yaml.MappingNode {
		return
	}
	md := yamlnode.Value(n, "metadata")
	if md == nil {
		md = &yaml.Node{Kind: yaml.MappingNode}
		n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: "metadata"}, md)
	}
	m := yamlnode.Value(md, field)
	if m == nil || m.Kind != yaml.MappingNode {
		if m != nil {
			return
		}
		m = &yaml.Node{Kind: yaml.MappingNode}
		md.Content = append(md.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: field}, m)
	}
	for _, k := range sortedKeys(add) {
		if v := yamlnode.Value(m, k); v != nil {
			v.Value, v.Tag, v.Style = add[k], "!!str", 0
			continue
		}
		m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: k}, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: add[k]})
	}
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	return keys
}

// valueTrace places the objects of a chart that is not in the repository
// at the HelmRelease: a rendered `key: value` whose key and value are
// those of exactly one `key: value` of spec.values is at that line (a
// privileged container set through values is reported where it is set);
// one that only a valuesFrom ConfigMap or Secret sets is at the
// valuesFrom entry that takes it (its targetPath for a single value);
// everything else at the nearest such parent, else at the HelmRelease.
type valueTrace struct {
	at map[string]*yaml.Node // "key\x00value" → the key node in spec.values (nil: ambiguous)
}

func newValueTrace(values *yaml.Node) *valueTrace {
	t := &valueTrace{at: map[string]*yaml.Node{}}
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if n == nil {
			return
		}
		if n.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				if v.Kind == yaml.ScalarNode {
					key := k.Value + "\x00" + v.Value
					if _, dup := t.at[key]; dup {
						t.at[key] = nil
					} else {
						t.at[key] = k
					}
				}
			}
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(values)
	return t
}

// addFrom adds the pairs valuesFrom sets (valuesFromTrace) that
// spec.values does not: spec.values is merged over them.
func (t *valueTrace) addFrom(from map[string]*yaml.Node) {
	for k, at := range from {
		if _, set := t.at[k]; !set {
			t.at[k] = at
		}
	}
}

// valuesFromTrace returns the `key: value` pairs each valuesFrom entry
// (fromNode, spec.valuesFrom as written) sets, each at the entry's node:
// the values of its ConfigMap or Secret of the input (valuesKey, else
// values.yaml), or the one value it puts at targetPath. A pair two
// entries set is ambiguous (nil). The values' own lines are in the
// ConfigMap's file, and a rendered object's positions are in one file,
// the HelmRelease's.
func (r *releaseRenderer) valuesFromTrace(ns string, hr *helmRelease, fromNode *yaml.Node) map[string]*yaml.Node {
	out := map[string]*yaml.Node{}
	if fromNode == nil || fromNode.Kind != yaml.SequenceNode {
		return out
	}
	add := func(key string, at *yaml.Node) {
		if _, dup := out[key]; dup {
			out[key] = nil
			return
		}
		out[key] = at
	}
	for i, ref := range hr.Spec.ValuesFrom {
		if i >= len(fromNode.Content) || (ref.Kind != "ConfigMap" && ref.Kind != "Secret") {
			continue
		}
		entry := fromNode.Content[i]
		if entry.Kind != yaml.MappingNode || len(entry.Content) == 0 {
			continue
		}
		text, ok := r.valuesText(ref.Kind, ns, ref.Name, ref.GetValuesKey())
		if !ok {
			continue
		}
		if ref.TargetPath != "" {
			at := entry.Content[0]
			for j := 0; j+1 < len(entry.Content); j += 2 {
				if entry.Content[j].Value == "targetPath" {
					at = entry.Content[j]
				}
			}
			path := strings.Split(ref.TargetPath, ".")
			add(path[len(path)-1]+"\x00"+text, at)
			continue
		}
		var doc yaml.Node
		if yaml.Unmarshal([]byte(text), &doc) != nil {
			continue
		}
		var walk func(n *yaml.Node)
		walk = func(n *yaml.Node) {
			if n.Kind == yaml.MappingNode {
				for j := 0; j+1 < len(n.Content); j += 2 {
					if v := n.Content[j+1]; v.Kind == yaml.ScalarNode {
						add(n.Content[j].Value+"\x00"+v.Value, entry.Content[0])
					}
				}
			}
			for _, c := range n.Content {
				walk(c)
			}
		}
		walk(&doc)
	}
	return out
}

// valuesText returns the text a ConfigMap or Secret of the input holds
// under key (a Secret's data decoded; its stringData as the API server
// would store it).
func (r *releaseRenderer) valuesText(kind, ns, name, key string) (string, bool) {
	o := r.ctx.find(kind, ns, name)
	if o == nil {
		return "", false
	}
	c, err := o.Content()
	if err != nil {
		return "", false
	}
	if kind == "Secret" {
		if sd, _ := c["stringData"].(map[string]any); sd != nil {
			if s, ok := sd[key].(string); ok {
				return s, true
			}
		}
		d, _ := c["data"].(map[string]any)
		s, ok := d[key].(string)
		if !ok {
			return "", false
		}
		b, err := base64.StdEncoding.DecodeString(s)
		return string(b), err == nil
	}
	d, _ := c["data"].(map[string]any)
	s, ok := d[key].(string)
	return s, ok
}

// matches reports whether a scalar `key: value` of n is one the trace
// places.
func (t *valueTrace) matches(n *yaml.Node) bool {
	if n == nil {
		return false
	}
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if v.Kind == yaml.ScalarNode && t.at[k.Value+"\x00"+v.Value] != nil {
				return true
			}
		}
	}
	for _, c := range n.Content {
		if t.matches(c) {
			return true
		}
	}
	return false
}

func (t *valueTrace) place(n *yaml.Node, root manifest.Position) {
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		n.Line, n.Column = 0, 0
		if n.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				if v.Kind == yaml.ScalarNode {
					if at := t.at[k.Value+"\x00"+v.Value]; at != nil {
						k.Line, k.Column = at.Line, at.Column
						v.Line, v.Column = at.Line, at.Column
						continue
					}
				}
				k.Line, k.Column = 0, 0
				walk(v)
			}
			return
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(n)
	n.Line, n.Column = root.Line, root.Column
}

// valuesPos is where values schema violations are reported: the line in
// spec.values of the first path a violation of the root chart names, else
// spec.values, else the HelmRelease.
func valuesPos(o *manifest.Object, values *yaml.Node, violations []string) manifest.Position {
	pos := o.Pos()
	if values == nil {
		return pos
	}
	pos.Line, pos.Column = values.Line, values.Column
	for _, l := range violations {
		m := schemaAt.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		n := values
		best := n
		for _, p := range strings.Split(strings.Trim(m[1], "/"), "/") {
			if p == "" {
				continue
			}
			var next *yaml.Node
			if n.Kind == yaml.MappingNode {
				for i := 0; i+1 < len(n.Content); i += 2 {
					if n.Content[i].Value == p {
						next, best = n.Content[i+1], n.Content[i]
					}
				}
			} else if n.Kind == yaml.SequenceNode {
				if i, err := strconv.Atoi(p); err == nil && i < len(n.Content) {
					next, best = n.Content[i], n.Content[i]
				}
			}
			if next == nil {
				break
			}
			n = next
		}
		pos.Line, pos.Column = best.Line, best.Column
		break
	}
	return pos
}

// violations lists the schema violations Helm's message holds (see
// schemaViolations), or the message itself when it holds none.
func violations(ch *chart.Chart, err error) []string {
	if out := schemaViolations(ch, err); len(out) > 0 {
		return out
	}
	return []string{strings.TrimSpace(err.Error())}
}

// toYAML writes objects as one YAML stream.
func toYAML(objs []*manifest.Object) ([]byte, error) {
	var buf bytes.Buffer
	for _, o := range objs {
		c, err := o.Content()
		if err != nil {
			return nil, err
		}
		data, err := sigsyaml.Marshal(c)
		if err != nil {
			return nil, err
		}
		buf.WriteString("---\n")
		buf.Write(data)
	}
	return buf.Bytes(), nil
}
