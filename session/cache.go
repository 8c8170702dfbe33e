package session

import (
	"github.com/kilnhq/kiln/internal/judgecache"
)

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
