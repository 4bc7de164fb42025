package datasets

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// layout names how a raw file separates its fields.
type layout int

const (
	commaSeparated layout = iota
	// whitespaceSeparated splits on runs of spaces and tabs, which absorbs
	// the doubled tabs of seeds_dataset.txt and the doubled spaces of
	// yacht_hydrodynamics.data.
	whitespaceSeparated
	// autoMPGLayout is eight whitespace-separated numbers, a TAB, then a
	// double-quoted car name that itself contains spaces.
	autoMPGLayout
)

// record is one data line of a raw file, split into fields.
type record struct {
	line   int // 1-based line number in the file, for error messages
	fields []string
}

// splitRecords cuts a raw file into records. It accepts LF and CRLF line
// endings, a missing final newline and blank lines anywhere (yacht ends in
// an empty line), and drops the first non-blank line when header is set.
func splitRecords(data []byte, lay layout, header bool) (hdr []string, recs []record, err error) {
	lines := bytes.Split(data, []byte("\n"))
	for i, raw := range lines {
		line := strings.TrimSpace(strings.TrimSuffix(string(raw), "\r"))
		if line == "" {
			continue
		}
		var fields []string
		switch lay {
		case commaSeparated:
			fields = strings.Split(line, ",")
			for j := range fields {
				fields[j] = strings.TrimSpace(fields[j])
			}
		case whitespaceSeparated:
			fields = strings.Fields(line)
		case autoMPGLayout:
			num, name, ok := strings.Cut(line, "\t")
			if !ok {
				return nil, nil, fmt.Errorf("line %d: no TAB before the car name", i+1)
			}
			fields = append(strings.Fields(num), strings.Trim(strings.TrimSpace(name), `"`))
		}
		if header && hdr == nil {
			hdr = fields
			continue
		}
		recs = append(recs, record{line: i + 1, fields: fields})
	}
	if header && hdr == nil {
		return nil, nil, fmt.Errorf("empty file: no header line")
	}
	return hdr, recs, nil
}

// parseNumber reads one numeric cell; "?" (the UCI missing-value mark)
// gives NaN so callers can drop incomplete rows.
func parseNumber(s string) (float64, error) {
	if s == "?" {
		return math.NaN(), nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("not a number: %q", s)
	}
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, fmt.Errorf("not a finite number: %q", s)
	}
	return v, nil
}

// categorical returns a cell converter mapping the listed labels to
// numbers; any other label is an error.
func categorical(levels map[string]float64) func(string) (float64, error) {
	return func(s string) (float64, error) {
		if s == "?" {
			return math.NaN(), nil
		}
		if v, ok := levels[s]; ok {
			return v, nil
		}
		keys := make([]string, 0, len(levels))
		for k := range levels {
			keys = append(keys, strconv.Quote(k))
		}
		slices.Sort(keys)
		return 0, fmt.Errorf("unknown label %q (want one of %s)", s, strings.Join(keys, ", "))
	}
}

// threshold returns a converter giving 1 when a numeric cell satisfies
// pred and 0 otherwise.
func threshold(pred func(float64) bool) func(string) (float64, error) {
	return func(s string) (float64, error) {
		v, err := parseNumber(s)
		if err != nil || math.IsNaN(v) {
			return v, err
		}
		if pred(v) {
			return 1, nil
		}
		return 0, nil
	}
}
