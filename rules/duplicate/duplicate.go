// Package duplicate holds object/duplicate: the same object (API group,
// kind, namespace and name) defined twice in what one apply unit deploys,
// or in two units that deploy into one cluster (manifest.ClusterOf).
// kubectl apply applies both copies in turn and the last one read wins,
// silently; a GitOps controller reports the resource as defined twice, or
// two controllers flap between the copies.
package duplicate

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/kilnhq/kiln/internal/binrec"
	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules"
)

// Duplicate is the rule ID.
const Duplicate = "object/duplicate"

// Checker reports object/duplicate.
var Checker = &rules.Checker{Name: "duplicate", Rules: ruleList, Prepare: prepare, Relates: true}

// named reports whether the object was written with metadata.name:
// objects with only generateName get a new name on every create and are
// never duplicates. Admission names them as the server does (generateName
// and five characters), so the name judged is not the one written (o.Name,
// which is generateName for them).
func named(o *manifest.Object) bool {
	content, err := o.Content()
	if err != nil || content == nil {
		return false
	}
	md, _ := content["metadata"].(map[string]any)
	name, _ := md["name"].(string)
	return name != "" && name == o.Name
}

// definition is what the checker keeps of one named object while the
// others are judged: its place in input order (to find it again) and a
// digest of its content; with the identity's digest, 32 bytes.
type definition struct {
	order  int64
	digest [8]byte
}

// prepare returns the judge that records every named object's identity;
// the duplicates are reported once every object was judged.
func prepare(p *rules.Pass) (rules.Judge, error) {
	var mu sync.Mutex
	var seen definitions
	p.Finish(func() { report(p, seen.copies()) })
	return func(o *manifest.Object) {
		if o.Name == "" || !named(o) {
			return
		}
		c := copyOf{key: identityHash(clusterIdentity(o)), def: definition{order: o.Order, digest: digest(o)}}
		mu.Lock()
		seen.add(c)
		mu.Unlock()
	}, nil
}

// copyOf is one definition of an identity.
type copyOf struct {
	key [16]byte
	def definition
}

// definitions are every named object's definition, 32 bytes each, in
// blocks (a map of them would take twice that, and one growing slice
// would copy itself).
type definitions struct{ blocks [][]copyOf }

const definitionsBlock = 4096

func (d *definitions) add(c copyOf) {
	if n := len(d.blocks); n == 0 || len(d.blocks[n-1]) == definitionsBlock {
		d.blocks = append(d.blocks, make([]copyOf, 0, definitionsBlock))
	}
	last := &d.blocks[len(d.blocks)-1]
	*last = append(*last, c)
}

// copies returns the definitions of the identities defined more than once,
// by identity and then input order, and lets go of the others.
func (d *definitions) copies() []copyOf {
	n := 0
	for _, b := range d.blocks {
		n += len(b)
	}
	all := make([]copyOf, 0, n)
	for i, b := range d.blocks {
		all = append(all, b...)
		d.blocks[i] = nil
	}
	d.blocks = nil
	slices.SortFunc(all, func(a, b copyOf) int {
		if c := bytes.Compare(a.key[:], b.key[:]); c != 0 {
			return c
		}
		return cmp.Compare(a.def.order, b.def.order)
	})
	var out []copyOf
	for i := 0; i < len(all); {
		j := i + 1
		for j < len(all) && all[j].key == all[i].key {
			j++
		}
		if j-i > 1 {
			out = append(out, all[i:j]...)
		}
		i = j
	}
	return out
}

// clusterIdentity is the object's identity in the cluster it is deployed
// into: within one unit, or across the units of one cluster (the Flux
// Kustomizations of one tree, the HelmReleases they deploy, and what the
// folder that declares a HelmRelease applies with it).
func clusterIdentity(o *manifest.Object) manifest.Identity {
	id := manifest.IdentityOf(o)
	id.Unit = manifest.ClusterOf(o)
	return id
}

// identityHash is a digest of an identity, by which the checker groups definitions.
func identityHash(id manifest.Identity) [16]byte {
	sum := sha256.Sum256([]byte(id.Unit + "\x00" + id.Group + "\x00" + id.Kind + "\x00" + id.Namespace + "\x00" + id.Name))
	return [16]byte(sum[:16])
}

// digest hashes the object's content, to tell identical copies apart from
// differing ones: the admitted content without what the server gives each
// object of its own (its uid; a Service's cluster IPs and node ports), so
// that copies written alike are identical.
func digest(o *manifest.Object) [8]byte {
	content, _ := o.Content()
	data, err := binrec.AppendCanonical(nil, withoutOwn(content))
	if err != nil {
		data, _ = json.Marshal(withoutOwn(content))
	}
	sum := sha256.Sum256(data)
	return [8]byte(sum[:8])
}

// withoutOwn returns content without metadata.uid and, for a Service, the
// allocated spec.clusterIP, spec.clusterIPs and ports' nodePorts; content
// itself is not changed.
func withoutOwn(content map[string]any) map[string]any {
	out := maps.Clone(content)
	if md, ok := out["metadata"].(map[string]any); ok {
		md = maps.Clone(md)
		delete(md, "uid")
		out["metadata"] = md
	}
	if out["kind"] != "Service" || out["apiVersion"] != "v1" {
		return out
	}
	spec, ok := out["spec"].(map[string]any)
	if !ok {
		return out
	}
	spec = maps.Clone(spec)
	delete(spec, "clusterIP")
	delete(spec, "clusterIPs")
	if ports, ok := spec["ports"].([]any); ok {
		ps := make([]any, len(ports))
		for i, p := range ports {
			if m, ok := p.(map[string]any); ok {
				m = maps.Clone(m)
				delete(m, "nodePort")
				p = m
			}
			ps[i] = p
		}
		spec["ports"] = ps
	}
	out["spec"] = spec
	return out
}

// report reports every copy after the first of an identity, at the copy,
// reading the copies involved again for their positions. copies are the
// definitions of identities defined more than once, by identity and then
// input order.
func report(p *rules.Pass, copies []copyOf) {
	if len(copies) == 0 {
		return
	}
	type dup struct{ first, again definition }
	var dups []dup
	var orders []int64
	first := 0 // where the identity's definitions start
	for i, c := range copies {
		orders = append(orders, c.def.order)
		if c.key != copies[first].key {
			first = i
		}
		if i > first {
			dups = append(dups, dup{copies[first].def, c.def})
		}
	}
	found := p.Find(orders)
	// pairs are two files of one unit.
	pairOf := func(first, again *manifest.Object) [3]string {
		return [3]string{first.File, again.File, manifest.UnitOf(first)}
	}
	perPair := map[[3]string]int{}
	for _, d := range dups {
		first, again := found[d.first.order], found[d.again.order]
		if first != nil && again != nil && first.File != again.File && manifest.UnitOf(first) == manifest.UnitOf(again) {
			perPair[pairOf(first, again)]++
		}
	}
	slices.SortFunc(dups, func(a, b dup) int { return cmp.Compare(a.again.order, b.again.order) })
	reported := map[[3]string]bool{}
	for _, d := range dups {
		first, again := found[d.first.order], found[d.again.order]
		if first == nil || again == nil {
			continue // changed on disk since it was judged
		}
		pair := pairOf(first, again)
		ref := again.Ref()
		at := p.Mark(again, "metadata.name")
		if n := perPair[pair]; n > 1 && manifest.UnitOf(first) == manifest.UnitOf(again) {
			// One file repeating many objects of another: alternative
			// bundles (install.yaml, namespace-install.yaml) more often
			// than a mistake. One finding per pair of files.
			if reported[pair] {
				continue
			}
			reported[pair] = true
			p.Report(rules.Diagnostic{Rule: Duplicate, At: at, Message: fmt.Sprintf(
				"this file defines %d objects that %s also defines, %s %q first (at %s): kubectl apply -f on the directory applies both and the last one wins without a word; if the files are alternatives applied one at a time, put them in separate directories (or exclude one in .kiln.yaml), else keep one definition",
				n, first.File, ref.Kind, ref.Name, first.Pos())})
			continue
		}
		same := "they differ, so the result depends on the order files are applied"
		if d.first.digest == d.again.digest {
			same = "the copies are identical"
		}
		ns := ""
		if ref.Namespace != "" {
			ns = fmt.Sprintf(" in namespace %q", ref.Namespace)
		}
		if manifest.UnitOf(first) != manifest.UnitOf(again) {
			// The copies of two controllers differ by the owner labels
			// each sets: whether they are alike says nothing here.
			p.Report(rules.Diagnostic{Rule: Duplicate, At: at, Message: fmt.Sprintf(
				"%s %q%s is deployed twice into one cluster: here (%s) and at %s (%s); both apply it, so Flux or Helm reports it as owned by the other or the two overwrite each other in turn; keep it in one of them",
				ref.Kind, ref.Name, ns, unitName(again), first.Pos(), unitName(first))})
			continue
		}
		p.Report(rules.Diagnostic{Rule: Duplicate, At: at, Message: fmt.Sprintf(
			"%s %q%s is defined twice: here and at %s (%s); kubectl apply applies both and the last one wins without a word, a GitOps controller reports a conflict; keep one definition, or put the copies in separate directories (one per environment)",
			ref.Kind, ref.Name, ns, first.Pos(), same)})
	}
}

// unitName names what deploys an object, for a message: what rendered it
// (its Via), else its folder.
func unitName(o *manifest.Object) string {
	if o.Via != "" {
		return o.Via
	}
	return "applied with the folder " + manifest.UnitOf(o)
}

var ruleList = []*rules.Rule{{
	ID:       Duplicate,
	Severity: rules.Warning,
	Summary:  "the same object (group, kind, namespace, name) is defined twice in one apply unit, or in two units deploying into one cluster",
	Doc: `Two definitions of one object (same API group, kind, namespace and name) in
the files of one directory, chart or kustomization: kubectl apply -f DIR
applies both in turn and the last one read wins without a word, so an edit to
the first copy never reaches the cluster; Argo CD and Flux report the
resource as defined twice. The finding is at the second copy and names the
first. When one file repeats several objects of another (alternative
bundles such as install.yaml and namespace-install.yaml), one finding at the
first repeated object stands for the pair of files. apps/v1 and
apps/v1beta2 are one group's versions of the same
object and count as one; objects with only generateName are never
duplicates.

kiln relates objects within one apply unit: a chart, a kustomization, a Flux
Kustomization's build, a HelmRelease's release, or (for plain manifests) the
files of one directory. Copies in different directories (one per
environment, an example next to the real thing) are separate units and are
not reported. Units are related across only where they deploy into one
cluster: the Flux Kustomizations of one tree (a root Kustomization and every
Kustomization it builds in turn; roots whose files share a folder, such as
clusters/production/, are one cluster), the HelmReleases those deploy, and
a HelmRelease with the folder that declares it. Two such units defining one
object make Flux or Helm report it as owned by the other, or flap between
the copies. See docs/flux.md.

Fix: keep one definition; if both are needed for different environments,
put them in separate directories or overlays.`,
	Fail: `apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: shop}
data: {LOG_LEVEL: info}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: shop}
data: {LOG_LEVEL: debug}
`,
	Pass: `apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: shop}
data: {LOG_LEVEL: info}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: shop-staging}
data: {LOG_LEVEL: debug}
`,
}}
