package settings

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseShard(t *testing.T) {
	tests := []struct {
		in   string
		want Shard
		bad  bool
	}{
		{in: "1/1", want: Shard{1, 1}},
		{in: "2/4", want: Shard{2, 4}},
		{in: " 3 / 3 ", want: Shard{3, 3}},
		{in: "0/4", bad: true},
		{in: "5/4", bad: true},
		{in: "2", bad: true},
		{in: "a/b", bad: true},
		{in: "1/0", bad: true},
	}
	for _, tt := range tests {
		got, err := ParseShard(tt.in)
		if (err != nil) != tt.bad || (!tt.bad && got != tt.want) {
			t.Errorf("ParseShard(%q) = %v, %v; want %v (bad %v)", tt.in, got, err, tt.want, tt.bad)
		}
	}
}

// TestShardHolds: every id is in exactly one shard, the same on every run,
// and the shards are about equal.
func TestShardHolds(t *testing.T) {
	const n, ids = 4, 4000
	sizes := make([]int, n)
	for i := range ids {
		id := fmt.Sprintf("apps/Deployment/ns-%d/web-%d", i%7, i)
		in := 0
		for s := 1; s <= n; s++ {
			if (Shard{s, n}).Holds(id) {
				in++
				sizes[s-1]++
			}
		}
		if in != 1 {
			t.Fatalf("%s is in %d shards", id, in)
		}
	}
	for s, size := range sizes {
		if size < ids/n*8/10 || size > ids/n*12/10 {
			t.Errorf("shard %d/%d holds %d of %d: not balanced", s+1, n, size, ids)
		}
	}
	if !(Shard{}).Holds("x") || (Shard{}).On() {
		t.Errorf("no shard holds everything")
	}
}

func TestBaselineSetting(t *testing.T) {
	s, err := parse(filepath.Join("ci", ".kiln.yaml"), []byte("baseline: kiln-baseline.jsonl\n"))
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join("ci", "kiln-baseline.jsonl"); s.Baseline != want {
		t.Errorf("baseline: %q, want %q (relative to the config)", s.Baseline, want)
	}
	_, err = parse(".kiln.yaml", []byte("kubeVersion: \"1.31\"\nbaseline: [a, b]\n"))
	if err == nil || !strings.HasPrefix(err.Error(), ".kiln.yaml:2:") {
		t.Errorf("a baseline list: %v, want an error at .kiln.yaml:2", err)
	}
	for _, key := range []string{"shard: 1/2", "newFromRev: main", "writeBaseline: b.jsonl"} {
		if _, err := parse(".kiln.yaml", []byte(key+"\n")); err == nil {
			t.Errorf("%s in .kiln.yaml: accepted, want an unknown key (a flag only)", key)
		}
	}
	flags := New()
	if err := flags.Apply(Assignment{Key: "shard", Value: Scalar("9/4"), From: "--shard"}); err == nil || !strings.HasPrefix(err.Error(), "--shard: ") {
		t.Errorf("--shard 9/4: %v", err)
	}
}
