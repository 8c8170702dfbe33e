package settings

import (
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
)

// Shard is one part of a run split N ways (kiln lint --shard I/N): Index
// counts from 1; a zero Shard is the whole run.
type Shard struct{ Index, Count int }

// String is "I/N".
func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Count) }

// On reports whether the shard is set (more than one part).
func (s Shard) On() bool { return s.Count > 1 }

// Holds reports whether the shard holds what is named by id (an object's
// identity, a file's path): a stable hash of id, modulo Count, is Index-1.
// Every id is in exactly one shard of a split.
func (s Shard) Holds(id string) bool {
	if !s.On() {
		return true
	}
	h := fnv.New64a()
	h.Write([]byte(id))
	return int(h.Sum64()%uint64(s.Count)) == s.Index-1
}

// ParseShard reads "I/N" (1 <= I <= N).
func ParseShard(v string) (Shard, error) {
	i, n, ok := strings.Cut(v, "/")
	index, err1 := strconv.Atoi(strings.TrimSpace(i))
	count, err2 := strconv.Atoi(strings.TrimSpace(n))
	if !ok || err1 != nil || err2 != nil || count < 1 || index < 1 || index > count {
		return Shard{}, fmt.Errorf("%q is not a shard: write I/N with 1 <= I <= N, e.g. 2/4", v)
	}
	return Shard{Index: index, Count: count}, nil
}

func applyShard(s *Settings, a Assignment, v value) error {
	sh, err := ParseShard(v.str)
	if err != nil {
		return a.errorf("%v", err)
	}
	s.Shard = sh
	return nil
}
