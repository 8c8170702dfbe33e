package rules

import (
	"reflect"
	"testing"

	"github.com/kilnhq/kiln/manifest"
)

func TestBatchRecordRoundTrip(t *testing.T) {
	rec := batchRecord{Objects: []*objRecord{
		{Diags: []diagRecord{{Checker: 2, Rule: "psa/privileged", Severity: Warning, Message: "m", Field: "spec", Pos: &manifest.Position{File: "a.yaml", Line: 3, Column: 5},
			Fix: &Fix{Action: FixRunAsNonRoot, Template: "spec.template"}, Assumed: "shop"}},
			Notes: []noteRecord{{Checker: 1, Name: "no-crd", Cause: "c", Field: "apiVersion", Msg: "x"}}, Refused: true, Content: []byte(`{"kind":"Pod"}`)},
		nil,
		{Content: []byte{}},
	}}
	data, err := rec.encode()
	if err != nil {
		t.Fatal(err)
	}
	got, ok := decodeBatch(data)
	if !ok {
		t.Fatal("decodeBatch refused what encode wrote")
	}
	if len(got.Objects) != 3 || got.Objects[1] != nil || !reflect.DeepEqual(got.Objects[0].Diags, rec.Objects[0].Diags) ||
		!reflect.DeepEqual(got.Objects[0].Notes, rec.Objects[0].Notes) || string(got.Objects[0].Content) != `{"kind":"Pod"}` || !got.Objects[0].Refused {
		t.Errorf("round trip: got %+v", got.Objects)
	}
	for cut := range len(data) {
		if _, ok := decodeBatch(data[:cut]); ok {
			t.Errorf("a record cut at %d of %d bytes was read", cut, len(data))
		}
	}
	if _, ok := decodeBatch(append(data, 0)); ok {
		t.Error("a record with a trailing byte was read")
	}
}

func FuzzDecodeBatch(f *testing.F) {
	rec := batchRecord{Objects: []*objRecord{{Diags: []diagRecord{{Rule: "r"}}, Content: []byte(`{}`)}, nil}}
	data, _ := rec.encode()
	f.Add(data)
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		got, ok := decodeBatch(data)
		if !ok {
			return
		}
		again, err := got.encode()
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := decodeBatch(again); !ok {
			t.Fatal("a record decodeBatch read does not read back once encoded")
		}
	})
}

func TestContentCodec(t *testing.T) {
	c := map[string]any{"apiVersion": "v1", "n": int64(-3), "f": 1.0, "g": 2.5, "t": true, "x": false, "z": nil,
		"list": []any{"a", int64(1), map[string]any{}, []any{}}, "m": map[string]any{"k": "v", "": ""}}
	data, err := encodeContent(c)
	if err != nil {
		t.Fatal(err)
	}
	got, ok := decodeContent(data)
	if !ok || !reflect.DeepEqual(got, c) {
		t.Fatalf("round trip: %#v, %v", got, ok)
	}
	for cut := range len(data) {
		if _, ok := decodeContent(data[:cut]); ok {
			t.Errorf("content cut at %d of %d bytes was read", cut, len(data))
		}
	}
	if _, err := encodeContent(map[string]any{"ch": make(chan int)}); err == nil {
		t.Error("a channel was encoded")
	}
	again, _ := encodeContent(map[string]any{"m": map[string]any{"": "", "k": "v"}, "z": nil, "x": false, "t": true, "g": 2.5, "f": 1.0,
		"n": int64(-3), "list": []any{"a", int64(1), map[string]any{}, []any{}}, "apiVersion": "v1"})
	if string(again) != string(data) {
		t.Error("equal contents encode differently")
	}
}

func FuzzDecodeContent(f *testing.F) {
	data, _ := encodeContent(map[string]any{"a": []any{int64(1), 2.5, "s", nil, true}})
	f.Add(data)
	f.Fuzz(func(t *testing.T, data []byte) {
		c, ok := decodeContent(data)
		if !ok {
			return
		}
		again, err := encodeContent(c)
		if err != nil {
			t.Fatal(err)
		}
		back, ok := decodeContent(again)
		if !ok {
			t.Fatal("encoded content does not decode")
		}
		if third, _ := encodeContent(back); string(third) != string(again) {
			t.Fatal("decoded content does not round-trip")
		}
	})
}
