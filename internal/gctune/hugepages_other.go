//go:build !linux

package gctune

// setUpPages does nothing: transparent huge pages are Linux's.
func setUpPages() {}
