package session

import (
	"github.com/kilnhq/kiln/internal/judgecache"
	"github.com/kilnhq/kiln/manifest"
)

// onRender is told of every unit discovery renders rather than restores
// from the content cache (discover.Options.Rendered); tests count renders
// with it.
var onRender func(kind, name string)

// renderCache is the part of the content cache discovery remembers
// rendered units in (discover.Options.Cache); nil without a cache.
func renderCache(c *judgecache.Store) manifest.Cache {
	if c == nil {
		return nil
	}
	return c.Sub("rendered")
}

// cache opens the content cache kiln lint remembers judged objects in: the
// --cache-dir, else the default directory; nil with --no-cache, or when
// the default directory cannot be made (the run judges every object, as
// with --no-cache). A --cache-dir that cannot be made is an error.
func (s *Session) cache() (*judgecache.Store, error) {
	if s.Settings.NoCache {
		return nil, nil
	}
	dir := s.Settings.CacheDir
	if dir == "" {
		d, err := judgecache.DefaultDir()
		if err != nil {
			return nil, nil
		}
		c, err := judgecache.Open(d, 0, "")
		if err != nil {
			return nil, nil
		}
		return c, nil
	}
	c, err := judgecache.Open(dir, 0, "")
	if err != nil {
		return nil, InputErrors{err}
	}
	return c, nil
}
