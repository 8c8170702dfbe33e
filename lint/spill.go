package lint

import (
	"bufio"
	"encoding/binary"
	"io"
	"slices"

	"github.com/kilnhq/kiln/internal/binrec"
	"github.com/kilnhq/kiln/internal/spill"
	"github.com/kilnhq/kiln/rules"
)

// spillStore is kiln lint's store of a run's findings (rules.Engine.Findings):
// at most limit of them in memory (0: all), beyond which sorted runs of
// them go to a temp file (package spill), read back merged in
// rules.CompareFindings order.
type spillStore struct{ *spill.Sorter[rules.Finding] }

func newSpillStore(limit int) spillStore {
	return spillStore{&spill.Sorter[rules.Finding]{Limit: limit, Compare: rules.CompareFindings, Append: appendFinding, Read: readFinding, Name: "findings"}}
}

// Finish returns the findings in memory, or nil and the temp file.
func (s spillStore) Finish() ([]rules.Finding, rules.FindingStream, error) {
	mem, file, err := s.Sorter.Finish()
	if file == nil {
		return mem, nil, err // no typed nil in the interface
	}
	return mem, file, err
}

// A spilled finding is its strings and numbers in field order, each string
// a uvarint length and its bytes, each number a varint, and a byte of
// flags saying whether a Suppression, a Fix, an assumed namespace and a
// Via follow.
const (
	hasSuppression = 1 << iota
	hasFix
	hasAssumed
	hasVia
)

func appendFinding(b []byte, f rules.Finding) []byte {
	b = binrec.AppendString(b, f.Rule)
	b = binary.AppendVarint(b, int64(f.Severity))
	b = binrec.AppendString(b, f.Message)
	b = binrec.AppendString(b, f.Pos.File)
	b = binary.AppendVarint(b, int64(f.Pos.Line))
	b = binary.AppendVarint(b, int64(f.Pos.Column))
	b = binrec.AppendString(b, f.Object.APIVersion)
	b = binrec.AppendString(b, f.Object.Kind)
	b = binrec.AppendString(b, f.Object.Namespace)
	b = binrec.AppendString(b, f.Object.Name)
	b = binrec.AppendString(b, f.Field)
	var flags byte
	if f.Suppressed != nil {
		flags |= hasSuppression
	}
	if f.Fix != nil {
		flags |= hasFix
	}
	if f.AssumedNamespace != "" {
		flags |= hasAssumed
	}
	if f.Via != "" {
		flags |= hasVia
	}
	b = append(b, flags)
	if s := f.Suppressed; s != nil {
		b = binrec.AppendString(b, s.Kind)
		b = binrec.AppendString(b, s.Reason)
	}
	if x := f.Fix; x != nil {
		b = binrec.AppendString(b, string(x.Action))
		b = binrec.AppendString(b, x.Template)
		b = binary.AppendVarint(b, int64(x.Container))
		b = binrec.AppendString(b, x.APIVersion)
	}
	if f.AssumedNamespace != "" {
		b = binrec.AppendString(b, f.AssumedNamespace)
	}
	if f.Via != "" {
		b = binrec.AppendString(b, f.Via)
	}
	return b
}

// spillReader decodes one finding; the first error sticks.
type spillReader struct {
	r   *bufio.Reader
	buf []byte
	err error
}

func (d *spillReader) int() int {
	if d.err != nil {
		return 0
	}
	v, err := binary.ReadVarint(d.r)
	d.err = err
	return int(v)
}

func (d *spillReader) string() string {
	if d.err != nil {
		return ""
	}
	n, err := binary.ReadUvarint(d.r)
	if err != nil {
		d.err = err
		return ""
	}
	if n == 0 {
		return ""
	}
	if int(n) <= d.r.Size() {
		// Read in place: string() is then the only copy.
		p, err := d.r.Peek(int(n))
		if err == nil {
			d.r.Discard(int(n))
			return string(p)
		}
	}
	d.buf = slices.Grow(d.buf[:0], int(n))[:n]
	_, d.err = io.ReadFull(d.r, d.buf)
	return string(d.buf)
}

// readFinding decodes the next finding; io.EOF at the end of the run.
func readFinding(r *bufio.Reader) (rules.Finding, error) {
	if _, err := r.Peek(1); err == io.EOF {
		return rules.Finding{}, io.EOF
	}
	d := &spillReader{r: r}
	var f rules.Finding
	f.Rule = d.string()
	f.Severity = rules.Severity(d.int())
	f.Message = d.string()
	f.Pos.File = d.string()
	f.Pos.Line = d.int()
	f.Pos.Column = d.int()
	f.Object.APIVersion = d.string()
	f.Object.Kind = d.string()
	f.Object.Namespace = d.string()
	f.Object.Name = d.string()
	f.Field = d.string()
	var flags byte
	if d.err == nil {
		flags, d.err = r.ReadByte()
	}
	if flags&hasSuppression != 0 {
		f.Suppressed = &rules.Suppression{Kind: d.string(), Reason: d.string()}
	}
	if flags&hasFix != 0 {
		f.Fix = &rules.Fix{Action: rules.FixAction(d.string()), Template: d.string(), Container: d.int(), APIVersion: d.string()}
	}
	if flags&hasAssumed != 0 {
		f.AssumedNamespace = d.string()
	}
	if flags&hasVia != 0 {
		f.Via = d.string()
	}
	if d.err != nil {
		if d.err == io.EOF {
			d.err = io.ErrUnexpectedEOF
		}
		return rules.Finding{}, d.err
	}
	return f, nil
}
