package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// resourceKind is one resource of a release's OpenAPI document and the kind
// it holds.
type resourceKind struct {
	groupVersionResource
	Kind string
}

var (
	// collectionPath and itemPath are the paths of a resource (not of a
	// subresource, not a watch).
	collectionPath = regexp.MustCompile(`^/(?:api/(v1)|apis/([^/]+)/([^/]+))/(?:namespaces/\{namespace\}/)?([a-z0-9]+)$`)
	itemPath       = regexp.MustCompile(`^/(?:api/(v1)|apis/([^/]+)/([^/]+))/(?:namespaces/\{namespace\}/)?([a-z0-9]+)/\{name\}$`)
)

type operation struct {
	GVK *struct {
		Group, Version, Kind string
	} `json:"x-kubernetes-group-version-kind"`
}

// swaggerResources reads api/openapi-spec/swagger.json, which hack/update-openapi-spec.sh
// generates with every API version enabled: all the resources the release
// has, with their kinds (the kind a create sends, else the kind a get returns).
func swaggerResources(kube string) ([]resourceKind, error) {
	file := filepath.Join(kube, "api", "openapi-spec", "swagger.json")
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %v", file, err)
	}
	kinds := map[groupVersionResource]string{}
	weak := map[groupVersionResource]bool{} // kind from a get, a create may say better
	for _, path := range slices.Sorted(maps.Keys(doc.Paths)) {
		ops := doc.Paths[path]
		for _, re := range []*regexp.Regexp{collectionPath, itemPath} {
			m := re.FindStringSubmatch(path)
			if m == nil {
				continue
			}
			r := groupVersionResource{Group: m[2], Version: m[1] + m[3], Resource: m[4]}
			for _, verb := range []string{"post", "get"} {
				raw, ok := ops[verb]
				if !ok {
					continue
				}
				var op operation
				if err := json.Unmarshal(raw, &op); err != nil || op.GVK == nil {
					continue
				}
				kind := op.GVK.Kind
				if verb == "get" && re == collectionPath {
					kind = strings.TrimSuffix(kind, "List")
				}
				if k, ok := kinds[r]; ok && !weak[r] && k != kind && verb == "post" {
					return nil, fmt.Errorf("%s: %s/%s %s creates both %s and %s", file, r.Group, r.Version, r.Resource, k, kind)
				}
				if _, ok := kinds[r]; !ok || (weak[r] && verb == "post") {
					kinds[r], weak[r] = kind, verb != "post"
				}
			}
		}
	}
	out := make([]resourceKind, 0, len(kinds))
	for r, k := range kinds {
		out = append(out, resourceKind{r, k})
	}
	slices.SortFunc(out, func(a, b resourceKind) int {
		return cmp.Or(cmp.Compare(a.Group, b.Group), cmp.Compare(a.Version, b.Version), cmp.Compare(a.Resource, b.Resource))
	})
	return out, nil
}
