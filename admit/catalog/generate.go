package catalog

// The catalog's data comes from the pinned releases in
// tools/crdcatalog/sources.go; to bump a project, change its row there and
// run go generate ./catalog.
//go:generate go run ../../tools/crdcatalog -out . -shared ../../../shared
