//go:build !linux

package heapstart

// setUpPages does nothing: transparent huge pages are Linux's.
func setUpPages() {}
