package datasets

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// FuzzReadTable feeds arbitrary bytes to the raw-file reader of every UCI
// task (the byte picks the task): it never panics, and a table it accepts
// is rectangular and finite; a table with the task's record count goes on
// through preprocessing to a task that validates.
func FuzzReadTable(f *testing.F) {
	ss := specs()
	f.Add(uint8(0), []byte("1,2,3\n"))
	f.Add(uint8(5), []byte("30,64,1,1\n30,62,3,1\n"))
	f.Add(uint8(4), []byte("18.0   8   307.0      130.0      3504.      12.0   70  1\t\"chevrolet chevelle malibu\"\n"))
	dir := uciTestdata
	for i := range ss {
		// The real files as seeds, cut to
		// their first 4 KB (whole lines): the fuzzer mutates and
		// minimises whole inputs, and the small files stay whole, so
		// preprocessing is reached too.
		if data, err := os.ReadFile(filepath.Join(dir, ss[i].info.Key, ss[i].info.File)); err == nil {
			if len(data) > 4096 {
				data = data[:bytes.LastIndexByte(data[:4096], '\n')+1]
			}
			f.Add(uint8(i), data)
		}
	}
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		ss := specs()
		s := &ss[int(which)%len(ss)]
		s.fill()
		tab, err := parseTable(s, data)
		if err != nil {
			if tab != nil {
				t.Fatal("a table with an error")
			}
			return
		}
		if len(tab.X) != len(tab.Y) || len(tab.Y) > tab.RawRows {
			t.Fatalf("%d rows of X, %d of Y, %d raw rows", len(tab.X), len(tab.Y), tab.RawRows)
		}
		for i, row := range tab.X {
			if len(row) != len(tab.Covariates) {
				t.Fatalf("row %d has %d values for %d covariates", i, len(row), len(tab.Covariates))
			}
			for _, v := range append(row, tab.Y[i]) {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					t.Fatalf("row %d holds %v", i, v)
				}
			}
		}
		if len(tab.Y) != s.info.N {
			return
		}
		task, err := build(s, tab)
		if err != nil {
			return
		}
		if err := task.Validate(); err != nil {
			t.Fatalf("%s: built task does not validate: %v", s.info.Key, err)
		}
	})
}

// FuzzParseARFF: any bytes either parse into a table whose every row has
// one cell per attribute, each a finite number, NaN (missing) or, for a
// nominal attribute, the index of a declared value — or fail with an
// error naming a line, never a panic.
func FuzzParseARFF(f *testing.F) {
	f.Add([]byte("@relation r\n@attribute a numeric\n@attribute 'b c' {x,'y z'}\n@data\n1.5,x\n?,'y z'\n"))
	f.Add([]byte("% c\n@RELATION \"q\"\n@ATTRIBUTE a REAL\n@DATA\n-1e3\n"))
	f.Add([]byte("@relation r\n@attribute a string\n@data\nfoo\n"))
	seeds, _ := filepath.Glob(filepath.Join(openmlTestdata, "*", "*.arff"))
	for _, p := range seeds {
		if data, err := os.ReadFile(p); err == nil {
			if len(data) > 4096 {
				data = data[:bytes.LastIndexByte(data[:4096], '\n')+1]
			}
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := ParseARFF(data)
		if err != nil {
			if a != nil {
				t.Fatal("a table with an error")
			}
			return
		}
		if len(a.Lines) != len(a.Rows) {
			t.Fatalf("%d rows but %d line numbers", len(a.Rows), len(a.Lines))
		}
		for i, row := range a.Rows {
			if len(row) != len(a.Attributes) {
				t.Fatalf("row %d has %d cells for %d attributes", i, len(row), len(a.Attributes))
			}
			for j, v := range row {
				if math.IsNaN(v) {
					continue
				}
				if math.IsInf(v, 0) {
					t.Fatalf("row %d cell %d is %v", i, j, v)
				}
				if at := a.Attributes[j]; at.Nominal() && (v != math.Trunc(v) || v < 0 || int(v) >= len(at.Values)) {
					t.Fatalf("row %d cell %d: nominal index %v outside %d values", i, j, v, len(at.Values))
				}
			}
		}
	})
}
