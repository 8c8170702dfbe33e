package binrec

import (
	"encoding/binary"
	"testing"
)

// TestRoundTrip: what is appended reads back, and a record cut anywhere
// reads as bad, never as other values.
func TestRoundTrip(t *testing.T) {
	var rec []byte
	rec = binary.AppendUvarint(rec, 300)
	rec = binary.AppendVarint(rec, -7)
	rec = AppendString(rec, "héllo")
	rec = AppendString(rec, "")
	r := Reader{Data: rec}
	if u, v, s, e := r.Uvarint(), r.Varint(), r.Str(), r.Str(); r.Bad || u != 300 || v != -7 || s != "héllo" || e != "" || len(r.Data) != 0 {
		t.Fatalf("read %d %d %q %q (bad %v, %d left)", u, v, s, e, r.Bad, len(r.Data))
	}
	for cut := range len(rec) - 1 {
		r := Reader{Data: rec[:cut]}
		r.Uvarint()
		r.Varint()
		s := r.Str()
		r.Str()
		if !r.Bad {
			t.Errorf("cut at %d: read as whole (%q)", cut, s)
		}
	}
}
