package memo

import (
	"reflect"
	"testing"

	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules"
)

func TestBatchRecordRoundTrip(t *testing.T) {
	rec := batchRecord{Objects: []*objRecord{
		{Diags: []diagRecord{{Checker: 2, Rule: "psa/privileged", Severity: rules.Warning, Message: "m", Field: "spec", Pos: &manifest.Position{File: "a.yaml", Line: 3, Column: 5},
			Fix: &rules.Fix{Action: rules.FixRunAsNonRoot, Template: "spec.template"}, Assumed: "shop"}},
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
