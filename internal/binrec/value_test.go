package binrec

import (
	"reflect"
	"testing"
)

func TestValueRoundTrip(t *testing.T) {
	c := map[string]any{"apiVersion": "v1", "n": int64(-3), "f": 1.0, "g": 2.5, "t": true, "x": false, "z": nil,
		"list": []any{"a", int64(1), map[string]any{}, []any{}}, "m": map[string]any{"k": "v", "": ""}}
	data, err := AppendCanonical(nil, c)
	if err != nil {
		t.Fatal(err)
	}
	got, ok := ReadMap(data)
	if !ok || !reflect.DeepEqual(got, c) {
		t.Fatalf("round trip: %#v, %v", got, ok)
	}
	for cut := range len(data) {
		if _, ok := ReadMap(data[:cut]); ok {
			t.Errorf("content cut at %d of %d bytes was read", cut, len(data))
		}
	}
	if _, err := AppendCanonical(nil, map[string]any{"ch": make(chan int)}); err == nil {
		t.Error("a channel was encoded")
	}
	again, _ := AppendCanonical(nil, map[string]any{"m": map[string]any{"": "", "k": "v"}, "z": nil, "x": false, "t": true, "g": 2.5, "f": 1.0,
		"n": int64(-3), "list": []any{"a", int64(1), map[string]any{}, []any{}}, "apiVersion": "v1"})
	if string(again) != string(data) {
		t.Error("equal contents encode differently")
	}
}

func FuzzReadMap(f *testing.F) {
	data, _ := AppendCanonical(nil, map[string]any{"a": []any{int64(1), 2.5, "s", nil, true}})
	f.Add(data)
	f.Fuzz(func(t *testing.T, data []byte) {
		c, ok := ReadMap(data)
		if !ok {
			return
		}
		again, err := AppendCanonical(nil, c)
		if err != nil {
			t.Fatal(err)
		}
		back, ok := ReadMap(again)
		if !ok {
			t.Fatal("encoded content does not decode")
		}
		if third, _ := AppendCanonical(nil, back); string(third) != string(again) {
			t.Fatal("decoded content does not round-trip")
		}
	})
}
