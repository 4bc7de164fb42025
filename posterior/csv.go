package posterior

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
)

// WriteCSV writes draws as CSV with header z1,...,zd, plus a final column w
// (the normalised weight) for weighted draws. A zero-weight row whose
// coordinates are not finite (a dead SNIS draw) is left out: it carries no
// mass, and ReadCSV would reject its NaN.
func WriteCSV(w io.Writer, d *Draws) error {
	bw := bufio.NewWriter(w)
	for i := 0; i < d.D; i++ {
		if i > 0 {
			bw.WriteByte(',')
		}
		fmt.Fprintf(bw, "z%d", i+1)
	}
	if d.W != nil {
		bw.WriteString(",w")
	}
	bw.WriteByte('\n')
	buf := make([]byte, 0, 32)
	for s := 0; s < d.Len(); s++ {
		if d.W != nil && d.W[s] == 0 && !allFinite(d.Row(s)) {
			continue
		}
		for i, v := range d.Row(s) {
			if i > 0 {
				bw.WriteByte(',')
			}
			bw.Write(strconv.AppendFloat(buf[:0], v, 'g', -1, 64))
		}
		if d.W != nil {
			bw.WriteByte(',')
			bw.Write(strconv.AppendFloat(buf[:0], d.W[s], 'g', -1, 64))
		}
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

// ReadCSV reads draws written by WriteCSV (or any CSV with header
// z1..zd[,w]). Weights, when present, are renormalised to sum to 1.
func ReadCSV(r io.Reader) (*Draws, error) {
	cr := csv.NewReader(r)
	cr.ReuseRecord = true
	header, err := cr.Read()
	if err == io.EOF {
		return nil, fmt.Errorf("draws file is empty (want a header z1,...,zd[,w] and rows)")
	}
	if err != nil {
		return nil, fmt.Errorf("reading draws header: %w", err)
	}
	d := 0
	weighted := false
	for i, h := range header {
		switch {
		case h == fmt.Sprintf("z%d", i+1):
			if weighted {
				return nil, fmt.Errorf("draws header: column %q after w", h)
			}
			d++
		case h == "w" && i == len(header)-1 && i > 0:
			weighted = true
		default:
			return nil, fmt.Errorf("draws header: column %d is %q, want z%d or a final w", i+1, h, i+1)
		}
	}
	if d == 0 {
		return nil, fmt.Errorf("draws header: no z columns")
	}
	out := &Draws{D: d}
	var sum float64
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("reading draws: %w", err)
		}
		for i, f := range rec {
			v, err := strconv.ParseFloat(f, 64)
			if err != nil {
				return nil, fmt.Errorf("draws line %d column %d: %w", line, i+1, err)
			}
			if v != v || v > 1.7976931348623157e308 || v < -1.7976931348623157e308 {
				return nil, fmt.Errorf("draws line %d column %d: value %v is not finite", line, i+1, v)
			}
			if weighted && i == d {
				if v < 0 {
					return nil, fmt.Errorf("draws line %d: negative weight %v", line, v)
				}
				out.W = append(out.W, v)
				sum += v
			} else {
				out.Z = append(out.Z, v)
			}
		}
	}
	if out.Len() == 0 {
		return nil, fmt.Errorf("draws file has no rows")
	}
	if weighted {
		if !(sum > 0) {
			return nil, fmt.Errorf("draws weights sum to %v, want > 0", sum)
		}
		for i := range out.W {
			out.W[i] /= sum
		}
	}
	return out, nil
}
