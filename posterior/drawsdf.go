package posterior

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// The draws-data-frame format is the CSV that the R package posterior
// reads back with as_draws_df(read.csv(FILE, check.names = FALSE)) and
// that pandas (hence ArviZ) indexes by chain and draw: meta columns
// .chain, .iteration, .draw, then one column per coordinate named z[1],
// z[2], … (posterior's and Stan's indexing of a vector), and for weighted
// draws a final .log_weight column, the name posterior reserves for the
// log of the draw weights (weights() recovers them, normalised).

// drawsDFMeta are the meta columns posterior recognises, in its order.
var drawsDFMeta = []string{".chain", ".iteration", ".draw"}

// logWeightColumn is posterior's reserved name for log weights.
const logWeightColumn = ".log_weight"

// WriteDrawsDF writes d in the draws-data-frame format. The S draws are
// chain after chain, chains of S/chains draws each (how the samplers hand
// them over); chains must divide S. A zero-weight draw with non-finite
// coordinates is left out, as WriteCSV does; its chain keeps the iteration
// numbering of the draws that remain.
func WriteDrawsDF(w io.Writer, d *Draws, chains int) error {
	s := d.Len()
	if chains < 1 || s%chains != 0 {
		return fmt.Errorf("draws data frame: %d draws do not split into %d equal chains", s, chains)
	}
	per := s / chains
	bw := bufio.NewWriter(w)
	bw.WriteString(strings.Join(drawsDFMeta, ","))
	for i := 1; i <= d.D; i++ {
		fmt.Fprintf(bw, ",z[%d]", i)
	}
	if d.W != nil {
		bw.WriteString("," + logWeightColumn)
	}
	bw.WriteByte('\n')
	buf := make([]byte, 0, 32)
	draw, iter := 0, 0
	for k := 0; k < s; k++ {
		if k%per == 0 {
			iter = 0
		}
		if d.W != nil && d.W[k] == 0 && !allFinite(d.Row(k)) {
			continue
		}
		draw++
		iter++
		fmt.Fprintf(bw, "%d,%d,%d", k/per+1, iter, draw)
		for _, v := range d.Row(k) {
			bw.WriteByte(',')
			bw.Write(strconv.AppendFloat(buf[:0], v, 'g', -1, 64))
		}
		if d.W != nil {
			// log(0) = -Inf, which R's read.csv and pandas both parse.
			bw.WriteByte(',')
			bw.Write(strconv.AppendFloat(buf[:0], math.Log(d.W[k]), 'g', -1, 64))
		}
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

// ChainDraws are draws with the chain each one belongs to.
type ChainDraws struct {
	*Draws
	// Chain holds a chain label per draw; nil means one chain.
	Chain []int
}

// Chains splits coordinate i into its chains, in the order each chain
// first appears (what posterior's summaries see).
func (c *ChainDraws) Chains(i int) [][]float64 {
	if c.Chain == nil {
		col := make([]float64, c.Len())
		for k := range col {
			col[k] = c.Z[k*c.D+i]
		}
		return [][]float64{col}
	}
	index := map[int]int{}
	var out [][]float64
	for k, ch := range c.Chain {
		j, ok := index[ch]
		if !ok {
			j = len(out)
			index[ch] = j
			out = append(out, nil)
		}
		out[j] = append(out[j], c.Z[k*c.D+i])
	}
	return out
}

// ReadAnyCSV reads either draws format: afin's z1..zd[,w] (one chain) or
// the draws data frame (WriteDrawsDF, or posterior's write.csv of a
// draws_df). It returns the draws, their chains and the coordinate names
// as the file gives them.
func ReadAnyCSV(r io.Reader) (*ChainDraws, []string, error) {
	br := bufio.NewReader(r)
	// R's write.csv quotes header names, so ".chain" may arrive quoted.
	if head, _ := br.Peek(2); strings.HasPrefix(string(head), ".") || string(head) == "\"." {
		return readDrawsDF(br)
	}
	d, err := ReadCSV(br)
	if err != nil {
		return nil, nil, err
	}
	names := make([]string, d.D)
	for i := range names {
		names[i] = fmt.Sprintf("z%d", i+1)
	}
	return &ChainDraws{Draws: d}, names, nil
}

// dfLayout says which column of a draws data frame holds what.
type dfLayout struct {
	chain, logW int // column indices, −1 when absent
	vars        []int
	names       []string
}

func parseDFHeader(header []string) (*dfLayout, error) {
	l := &dfLayout{chain: -1, logW: -1}
	for i, h := range header {
		switch h {
		case ".chain":
			l.chain = i
		case ".iteration", ".draw":
		case logWeightColumn:
			l.logW = i
		case "":
			return nil, fmt.Errorf("draws header: column %d has no name", i+1)
		default:
			if strings.HasPrefix(h, ".") {
				return nil, fmt.Errorf("draws header: column %q is not a posterior meta column (.chain, .iteration, .draw, .log_weight)", h)
			}
			l.vars = append(l.vars, i)
			l.names = append(l.names, h)
		}
	}
	if len(l.vars) == 0 {
		return nil, fmt.Errorf("draws header: no variable columns")
	}
	return l, nil
}

// readDrawsDF reads a draws data frame; log weights are turned into
// normalised weights (max-shifted, so very negative ones do not underflow
// all at once).
func readDrawsDF(r io.Reader) (*ChainDraws, []string, error) {
	cr := csv.NewReader(r)
	header, err := cr.Read()
	if err != nil {
		return nil, nil, fmt.Errorf("reading draws header: %w", err)
	}
	l, err := parseDFHeader(header)
	if err != nil {
		return nil, nil, err
	}
	out := &ChainDraws{Draws: &Draws{D: len(l.vars)}}
	var logW []float64
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, fmt.Errorf("reading draws: %w", err)
		}
		num := func(i int) (float64, error) {
			v, err := strconv.ParseFloat(rec[i], 64)
			if err != nil {
				return 0, fmt.Errorf("draws line %d column %q: %w", line, header[i], err)
			}
			return v, nil
		}
		for _, i := range l.vars {
			v, err := num(i)
			if err != nil {
				return nil, nil, err
			}
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, nil, fmt.Errorf("draws line %d column %q: value %v is not finite", line, header[i], v)
			}
			out.Z = append(out.Z, v)
		}
		if l.chain >= 0 {
			c, err := strconv.Atoi(rec[l.chain])
			if err != nil {
				return nil, nil, fmt.Errorf("draws line %d column \".chain\": %w", line, err)
			}
			out.Chain = append(out.Chain, c)
		}
		if l.logW >= 0 {
			v, err := num(l.logW)
			if err != nil {
				return nil, nil, err
			}
			if math.IsNaN(v) || math.IsInf(v, 1) {
				return nil, nil, fmt.Errorf("draws line %d column %q: log weight %v", line, logWeightColumn, v)
			}
			logW = append(logW, v)
		}
	}
	if out.Len() == 0 {
		return nil, nil, fmt.Errorf("draws file has no rows")
	}
	if logW != nil {
		w, ok := normalizeLogWeights(logW)
		if !ok {
			return nil, nil, fmt.Errorf("draws weights: every log weight is -Inf")
		}
		out.W = w
	}
	return out, l.names, nil
}
