package records

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// FuzzScan feeds arbitrary bytes to the results-file reader: it never
// panics; every record it keeps validates, and writing the kept records
// back gives a file that reads to the same records with no warning.
func FuzzScan(f *testing.F) {
	data, err := os.ReadFile(filepath.Join("testdata", "smoke-v0.jsonl"))
	if err != nil {
		f.Fatal(err)
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	one := lines[0]
	f.Add(one)
	f.Add(bytes.Join(lines[:3], nil))
	f.Add(append(append([]byte{}, one[:len(one)/2]...), one...)) // torn write glued to a record
	f.Add(append(append([]byte{}, one...), one[:len(one)/3]...)) // torn last line
	f.Add(bytes.TrimSuffix(one, []byte("\n")))                   // no final newline
	f.Add([]byte("not json\n"))
	f.Add([]byte(`{"suite":"synthetic"}` + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		sc, err := scanBytes("fuzz.jsonl", data)
		if err != nil {
			if sc != nil {
				t.Fatal("a scan with an error")
			}
			return
		}
		if len(sc.recs) != len(sc.raw) {
			t.Fatalf("%d records, %d raw lines", len(sc.recs), len(sc.raw))
		}
		for i := range sc.recs {
			if err := sc.recs[i].Validate(); err != nil {
				t.Fatalf("kept record %d does not validate: %v\n%s", i, err, sc.raw[i])
			}
		}
		var buf bytes.Buffer
		if err := WriteRecords(&buf, sc.recs); err != nil {
			t.Fatalf("kept records do not write: %v", err)
		}
		back, err := scanBytes("rewritten.jsonl", buf.Bytes())
		if err != nil {
			t.Fatalf("rewritten records do not read: %v\n%s", err, buf.Bytes())
		}
		if back.dirty() || len(back.recs) != len(sc.recs) {
			t.Fatalf("rewrite read as %d records (dirty %v), want %d clean", len(back.recs), back.dirty(), len(sc.recs))
		}
		for i := range back.recs {
			a, _ := json.Marshal(&sc.recs[i])
			b, _ := json.Marshal(&back.recs[i])
			if !bytes.Equal(a, b) {
				t.Fatalf("record %d changed in the rewrite:\n%s\n%s", i, a, b)
			}
		}
	})
}
