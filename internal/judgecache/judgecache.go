// Package judgecache keeps on disk what kiln lint's rule engine remembers
// between runs (manifest.Cache): one file per entry, named by a hash of the
// entry's key and of the kiln build, so that another build of kiln never
// reads it. Entries are written to a temporary file and renamed into
// place, so that a reader sees a whole entry or none; each carries a
// checksum of its contents, so that a torn or corrupted one is a miss.
// Past a size bound, the entries read or written longest ago go.
package judgecache

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultMaxBytes bounds a cache directory unless Open is told otherwise.
const DefaultMaxBytes = 512 << 20

// magic starts every entry; its number changes with the entry's layout.
var magic = []byte("kiln-cache 1\n")

// Store is a cache directory. Its methods are safe for concurrent use, by
// goroutines and by processes sharing the directory.
type Store struct {
	dir      string
	salt     [32]byte
	maxBytes int64
	now      func() time.Time

	gets, hits, puts atomic.Int64
	wrote            *atomic.Int64 // bytes written, by this store and its Subs
	mkdir            *sync.Map     // fan-out directories made
}

// Sub returns a store of the same directory and bound whose keys are apart
// from this one's (its own name space) and whose Stats count apart; what it
// writes counts for this store's Trim.
func (s *Store) Sub(name string) *Store {
	salt := sha256.Sum256(append(s.salt[:], name...))
	return &Store{dir: s.dir, salt: salt, maxBytes: s.maxBytes, now: s.now, wrote: s.wrote, mkdir: s.mkdir}
}

// DefaultDir is where kiln keeps its cache: $XDG_CACHE_HOME/kiln/judged
// (or the system's user cache directory).
func DefaultDir() (string, error) {
	base, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(base, "kiln", "judged"), nil
}

// Open returns the store in dir, made if missing, bounded to maxBytes (0:
// DefaultMaxBytes). build names the kiln build whose entries it reads and
// writes ("": BuildID()).
func Open(dir string, maxBytes int64, build string) (*Store, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("cannot use the cache directory %s: %w", dir, errors.Unwrap(err))
	}
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBytes
	}
	if build == "" {
		build = BuildID()
	}
	return &Store{dir: dir, salt: sha256.Sum256([]byte(build)), maxBytes: maxBytes, now: time.Now, wrote: new(atomic.Int64), mkdir: new(sync.Map)}, nil
}

// path returns the file of a key.
func (s *Store) path(key [32]byte) (dir, file string) {
	h := sha256.New()
	h.Write(s.salt[:])
	h.Write(key[:])
	name := hex.EncodeToString(h.Sum(nil))
	dir = filepath.Join(s.dir, name[:2])
	return dir, filepath.Join(dir, name[2:])
}

// Get returns the entry of key, or nil if there is none or it is not
// whole.
func (s *Store) Get(key [32]byte) []byte {
	s.gets.Add(1)
	_, file := s.path(key)
	data, err := os.ReadFile(file)
	if err != nil {
		return nil
	}
	body, ok := open(data)
	if !ok {
		return nil
	}
	s.hits.Add(1)
	now := s.now()
	os.Chtimes(file, now, now) // read recently: kept longer
	return body
}

// open checks an entry's magic and checksum and returns its body.
func open(data []byte) ([]byte, bool) {
	if !bytes.HasPrefix(data, magic) || len(data) < len(magic)+sha256.Size {
		return nil, false
	}
	sum, body := data[len(magic):len(magic)+sha256.Size], data[len(magic)+sha256.Size:]
	if got := sha256.Sum256(body); !bytes.Equal(got[:], sum) {
		return nil, false
	}
	return body, true
}

// Put stores data under key. A failure to write is not an error: the
// entry is missed next time.
func (s *Store) Put(key [32]byte, data []byte) {
	dir, file := s.path(key)
	if _, made := s.mkdir.Load(dir); !made {
		if os.MkdirAll(dir, 0o755) != nil {
			return
		}
		s.mkdir.Store(dir, true)
	}
	tmp, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return
	}
	sum := sha256.Sum256(data)
	_, err = tmp.Write(slices.Concat(magic, sum[:], data))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), file)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return
	}
	s.puts.Add(1)
	s.wrote.Add(int64(len(data) + len(magic) + sha256.Size))
}

// Stats are a store's counts since Open.
type Stats struct{ Gets, Hits, Puts int64 }

// Stats returns how many entries were asked for, found and written.
func (s *Store) Stats() Stats {
	return Stats{Gets: s.gets.Load(), Hits: s.hits.Load(), Puts: s.puts.Load()}
}

// Trim removes the entries read or written longest ago until the
// directory holds at most 80 % of its bound, if this store wrote anything
// and the directory is over it; and temporary files a killed run left
// (an hour old). Call it when a run ends.
func (s *Store) Trim() error {
	if s.wrote.Load() == 0 {
		return nil
	}
	type entry struct {
		path string
		size int64
		at   time.Time
	}
	var all []entry
	var total int64
	stale := s.now().Add(-time.Hour)
	err := filepath.WalkDir(s.dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		if filepath.Base(path)[0] == '.' {
			if info.ModTime().Before(stale) {
				os.Remove(path)
			}
			return nil
		}
		all = append(all, entry{path, info.Size(), info.ModTime()})
		total += info.Size()
		return nil
	})
	if err != nil || total <= s.maxBytes {
		return err
	}
	slices.SortFunc(all, func(a, b entry) int { return a.at.Compare(b.at) })
	for _, e := range all {
		if total <= s.maxBytes*8/10 {
			break
		}
		if err := os.Remove(e.path); err == nil || errors.Is(err, fs.ErrNotExist) {
			total -= e.size
		}
	}
	return nil
}

// BuildID names this kiln build: its module versions and checksums, its
// VCS revision and, for a build from a modified tree or of unknown origin,
// its executable's size and time, so that entries of another build are
// never read.
func BuildID() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return exeID()
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s %s %s %s\n", info.GoVersion, info.Main.Path, info.Main.Version, info.Main.Sum)
	for _, d := range info.Deps {
		fmt.Fprintf(&b, "%s %s %s\n", d.Path, d.Version, d.Sum)
	}
	revision, modified := "", false
	for _, kv := range info.Settings {
		fmt.Fprintf(&b, "%s=%s\n", kv.Key, kv.Value)
		switch kv.Key {
		case "vcs.revision":
			revision = kv.Value
		case "vcs.modified":
			modified = kv.Value == "true"
		}
	}
	released := info.Main.Version != "" && info.Main.Version != "(devel)"
	if !released && (revision == "" || modified) {
		b.WriteString(exeID())
	}
	return b.String()
}

// exeID is the running executable's path, size and modification time.
func exeID() string {
	exe, err := os.Executable()
	if err != nil {
		return fmt.Sprint("unknown executable ", time.Now().UnixNano()) // never matches: no cache
	}
	info, err := os.Stat(exe)
	if err != nil {
		return fmt.Sprint("unknown executable ", time.Now().UnixNano())
	}
	return fmt.Sprintf("%s %d %d", exe, info.Size(), info.ModTime().UnixNano())
}
