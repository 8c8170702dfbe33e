package conformance

import (
	"encoding/json"
	"strings"
	"sync"

	"github.com/kilnhq/kiln/manifest"
)

// discovery is what the server serves, from its discovery documents (as
// kubectl finds where to send an object): per group-version, each kind's
// resource and scope.
type discovery struct {
	s  *apiServer
	mu sync.Mutex
	gv map[string]map[string]apiResource // nil: the group-version is not served
}

type apiResource struct {
	Name       string `json:"name"`
	Kind       string `json:"kind"`
	Namespaced bool   `json:"namespaced"`
}

func newDiscovery(s *apiServer) *discovery {
	return &discovery{s: s, gv: map[string]map[string]apiResource{}}
}

// forget drops what was read, after CRDs were created.
func (d *discovery) forget() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.gv = map[string]map[string]apiResource{}
}

// lookup returns the resource serving apiVersion and kind.
func (d *discovery) lookup(apiVersion, kind string) (apiResource, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	kinds, read := d.gv[apiVersion]
	if !read {
		path := "/apis/" + apiVersion
		if !strings.Contains(apiVersion, "/") {
			path = "/api/" + apiVersion
		}
		code, body, _, err := d.s.do("GET", path, nil)
		if err == nil && code == 200 {
			var list struct {
				Resources []apiResource `json:"resources"`
			}
			if json.Unmarshal(body, &list) == nil {
				kinds = map[string]apiResource{}
				for _, r := range list.Resources {
					if !strings.Contains(r.Name, "/") { // not a subresource
						kinds[r.Kind] = r
					}
				}
			}
		}
		d.gv[apiVersion] = kinds
	}
	r, ok := kinds[kind]
	return r, ok
}

// served reports whether the server serves the object's version and kind.
func (d *discovery) served(o *manifest.Object) bool {
	_, ok := d.lookup(o.APIVersion, o.Kind)
	return ok
}

// path is the collection an object is POSTed to: the served resource, else
// the one kiln's table of built-in kinds names in another version of the
// group (the server answers 404 for a version it does not serve), else
// the kind's guessed plural.
func (d *discovery) path(o *manifest.Object) string {
	gv := "/api/" + o.Version()
	if o.Group() != "" {
		gv = "/apis/" + o.APIVersion
	}
	r, ok := d.lookup(o.APIVersion, o.Kind)
	if !ok {
		r = apiResource{Name: manifest.GuessResource(o.Kind), Namespaced: o.Namespace != ""}
		for _, b := range builtinKinds.All() {
			if b.GVK.Group == o.Group() && b.GVK.Kind == o.Kind {
				r = apiResource{Name: b.GVR.Resource, Namespaced: b.Namespaced}
				break
			}
		}
	}
	if !r.Namespaced {
		return gv + "/" + r.Name
	}
	ns := o.Namespace
	if ns == "" {
		ns = "default"
	}
	return gv + "/namespaces/" + ns + "/" + r.Name
}

var builtinKinds = manifest.BuiltinKinds()

// builtinGroups are the groups of kiln's table of built-in kinds, which the
// API server itself serves: other groups need a CRD.
var builtinGroups = sync.OnceValue(func() map[string]bool {
	out := map[string]bool{}
	for _, r := range builtinKinds.All() {
		if !r.CRD {
			out[r.GVK.Group] = true
		}
	}
	return out
})

// builtinGroup reports whether the API server itself serves the object's group.
func builtinGroup(o *manifest.Object) bool { return builtinGroups()[o.Group()] }

// servedGVK reports whether the server serves a kind at apiVersion.
func (d *discovery) servedGVK(apiVersion, kind string) bool {
	_, ok := d.lookup(apiVersion, kind)
	return ok
}
