package judgecache

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

func key(s string) [32]byte { return sha256.Sum256([]byte(s)) }

func TestGetPut(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, 0, "build a")
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Get(key("x")); got != nil {
		t.Fatalf("empty store: Get = %q", got)
	}
	s.Put(key("x"), []byte("judged"))
	if got := s.Get(key("x")); string(got) != "judged" {
		t.Fatalf("Get = %q, want judged", got)
	}
	if got := s.Get(key("y")); got != nil {
		t.Fatalf("another key: Get = %q", got)
	}
	if st := s.Stats(); st != (Stats{Gets: 3, Hits: 1, Puts: 1}) {
		t.Errorf("Stats = %+v", st)
	}
	other, _ := Open(dir, 0, "build b")
	if got := other.Get(key("x")); got != nil {
		t.Errorf("another kiln build read an entry of build a: %q", got)
	}
	again, _ := Open(dir, 0, "build a")
	if got := again.Get(key("x")); string(got) != "judged" {
		t.Errorf("the same build, opened again: Get = %q", got)
	}
}

// TestSub: a Sub's keys are apart from its parent's and from another
// Sub's, its Stats count apart, and what it writes counts for the parent's
// Trim.
func TestSub(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, 1, "build a")
	if err != nil {
		t.Fatal(err)
	}
	parsed, other := s.Sub("parsed"), s.Sub("other")
	parsed.Put(key("x"), []byte("parsed"))
	if got := s.Get(key("x")); got != nil {
		t.Errorf("the parent read its Sub's entry: %q", got)
	}
	if got := other.Get(key("x")); got != nil {
		t.Errorf("another Sub read the entry: %q", got)
	}
	if got := s.Sub("parsed").Get(key("x")); string(got) != "parsed" {
		t.Errorf("the same Sub, made again: Get = %q", got)
	}
	if st := parsed.Stats(); st != (Stats{Gets: 0, Hits: 0, Puts: 1}) {
		t.Errorf("Sub Stats = %+v", st)
	}
	if st := s.Stats(); st != (Stats{Gets: 1}) {
		t.Errorf("parent Stats = %+v", st)
	}
	// The bound is one byte: the parent's Trim removes the Sub's entry.
	if err := s.Trim(); err != nil {
		t.Fatal(err)
	}
	if got := s.Sub("parsed").Get(key("x")); got != nil {
		t.Errorf("the parent's Trim kept its Sub's entry over the bound: %q", got)
	}
}

// TestDamagedEntries: whatever is in an entry's file but a whole entry is a
// miss.
func TestDamagedEntries(t *testing.T) {
	dir := t.TempDir()
	s, _ := Open(dir, 0, "b")
	body := bytes.Repeat([]byte("findings "), 100)
	damage := map[string]func([]byte) []byte{
		"torn":          func(d []byte) []byte { return d[:len(d)-10] },
		"header only":   func(d []byte) []byte { return d[:len(magic)+sha256.Size] },
		"magic only":    func(d []byte) []byte { return d[:len(magic)] },
		"empty":         func(d []byte) []byte { return nil },
		"flipped bit":   func(d []byte) []byte { d[len(d)/2] ^= 1; return d },
		"other version": func(d []byte) []byte { d[len(magic)-2]++; return d },
		"appended":      func(d []byte) []byte { return append(d, '\n') },
	}
	for name, fn := range damage {
		t.Run(name, func(t *testing.T) {
			k := key(name)
			s.Put(k, body)
			_, file := s.path(k)
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(file, fn(data), 0o644); err != nil {
				t.Fatal(err)
			}
			if got := s.Get(k); got != nil {
				t.Errorf("a %s entry was read: %d bytes", name, len(got))
			}
		})
	}
}

// TestConcurrent: stores of one directory written and read at once, as
// concurrent runs do, read whole entries or none.
func TestConcurrent(t *testing.T) {
	dir := t.TempDir()
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			s, err := Open(dir, 0, "b")
			if err != nil {
				t.Error(err)
				return
			}
			for i := range 200 {
				k := key(fmt.Sprint(i % 10))
				want := bytes.Repeat([]byte{byte('a' + i%10)}, 10000+i%10)
				if w%2 == 0 {
					s.Put(k, want)
				}
				if got := s.Get(k); got != nil && !bytes.Equal(got, want) {
					t.Errorf("key %d: read %d bytes that are not what was put", i%10, len(got))
					return
				}
			}
		})
	}
	wg.Wait()
	left, _ := filepath.Glob(filepath.Join(dir, "*", ".tmp-*"))
	if len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// TestTrim: past its bound a directory loses the entries used longest ago.
func TestTrim(t *testing.T) {
	dir := t.TempDir()
	s, _ := Open(dir, 10000, "b")
	clock := time.Unix(1_700_000_000, 0)
	s.now = func() time.Time { return clock }
	for i := range 20 {
		k := key(fmt.Sprint(i))
		s.Put(k, bytes.Repeat([]byte{'x'}, 1000))
		_, file := s.path(k)
		at := clock.Add(time.Duration(i) * time.Minute)
		os.Chtimes(file, at, at)
	}
	clock = clock.Add(time.Hour)
	s.Get(key("0")) // the oldest, read now: kept
	if err := s.Trim(); err != nil {
		t.Fatal(err)
	}
	var total int64
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			total += info.Size()
		}
		return nil
	})
	if total > 8000 {
		t.Errorf("after Trim the directory holds %d bytes, over 80%% of 10000", total)
	}
	if s.Get(key("0")) == nil {
		t.Error("Trim removed the entry read last")
	}
	if s.Get(key("1")) != nil {
		t.Error("Trim kept the entry used longest ago")
	}
	if s.Get(key("19")) == nil {
		t.Error("Trim removed the entry written last")
	}
}

func TestOpenUnusable(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o644)
	if _, err := Open(filepath.Join(file, "cache"), 0, "b"); err == nil {
		t.Fatal("Open under a file: no error")
	}
}

func FuzzOpen(f *testing.F) {
	sum := sha256.Sum256([]byte("body"))
	f.Add(append(append(append([]byte(nil), magic...), sum[:]...), "body"...))
	f.Add([]byte("kiln-cache 1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		body, ok := open(data)
		if !ok {
			return
		}
		if got := sha256.Sum256(body); !bytes.Equal(got[:], data[len(magic):len(magic)+sha256.Size]) {
			t.Fatal("open returned a body its checksum does not match")
		}
	})
}
