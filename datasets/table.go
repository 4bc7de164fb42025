package datasets

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
)

// Table is one dataset read from its raw file and cleaned: records with a
// missing value ("?") in a used column are dropped, categorical cells are
// coded as numbers. Values are in raw units, before any preprocessing.
type Table struct {
	Key        string
	Covariates []string    // names of the candidate covariates, in file order
	X          [][]float64 // len(Y) rows × len(Covariates)
	Response   string
	Y          []float64 // raw regression response, or the 0/1 label
	RawRows    int       // data records in the file
	RawCols    int       // fields per record
}

// ReadTable reads and cleans the raw file of task key under dir (BuiltIn:
// the copy built into the binary); a missing file is an ErrNoData.
func ReadTable(dir, key string) (*Table, error) {
	s, err := lookupSpec(key)
	if err != nil {
		return nil, err
	}
	path := rawPath(dir, "uci", s.info.Key, s.info.File)
	data, err := readRaw(dir, "uci", s.info.Key, s.info.File)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, &noDataError{fmt.Errorf("%s: raw file %s not found: %s", key, path, howToGet)}
		}
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	t, err := parseTable(s, data)
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", key, path, err)
	}
	return t, nil
}

// howToGet is the remedy appended to every missing-data error.
const howToGet = "run `afin datasets fetch` (with the same --data-dir or AFIN_DATA_DIR) to download the UCI raw files there, " +
	"set AFIN_DATA_DIR (or pass --data-dir) to a directory holding them as <key>/<file>, " +
	"or unset both to use the copy built into afin (the repository's datasets/uci)"

// parseTable splits and converts one raw file. It checks the field count
// of every record, so a wrong or truncated file fails here with its line.
func parseTable(s *spec, data []byte) (*Table, error) {
	_, recs, err := splitRecords(data, s.layout, s.header)
	if err != nil {
		return nil, err
	}
	if len(recs) == 0 {
		return nil, errors.New("no data records")
	}
	t := &Table{Key: s.info.Key, Response: s.response.name, RawRows: len(recs), RawCols: s.info.RawCols}
	for _, c := range s.covariates {
		t.Covariates = append(t.Covariates, c.name)
	}
	cols := append(append([]column(nil), s.covariates...), s.response)
	for _, r := range recs {
		if len(r.fields) != s.info.RawCols {
			return nil, fmt.Errorf("line %d: %d fields, want %d", r.line, len(r.fields), s.info.RawCols)
		}
		row := make([]float64, len(cols))
		complete := true
		for j, c := range cols {
			conv := c.conv
			if conv == nil {
				conv = parseNumber
			}
			v, err := conv(r.fields[c.index])
			if err != nil {
				return nil, fmt.Errorf("line %d, column %d (%s): %w", r.line, c.index+1, c.name, err)
			}
			if math.IsNaN(v) {
				complete = false
			}
			row[j] = v
		}
		if !complete {
			continue
		}
		t.X = append(t.X, row[:len(s.covariates)])
		t.Y = append(t.Y, row[len(s.covariates)])
	}
	return t, nil
}
