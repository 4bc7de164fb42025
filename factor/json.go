package factor

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// maxJSONDepth bounds nesting while reading: a task needs 4 levels (task,
// prior, precision, row), and a bound keeps hostile input from recursing
// deeply.
const maxJSONDepth = 32

// jnode is one JSON value, kept with object keys in document order so the
// reader can report duplicate and unknown fields by path.
type jnode struct {
	kind byte // 'o' object, 'a' array, 'n' number, 's' string, 'b' bool, 'z' null
	num  string
	str  string
	b    bool
	arr  []*jnode
	keys []string
	vals []*jnode
}

// describe renders a value for an error message's "got" part.
func (n *jnode) describe() string {
	switch n.kind {
	case 'n':
		return n.num
	case 's':
		s := n.str
		if len(s) > 40 {
			s = s[:40] + "…"
		}
		return strconv.Quote(s)
	case 'b':
		return strconv.FormatBool(n.b)
	case 'z':
		return "null"
	case 'a':
		return "an array of length " + strconv.Itoa(len(n.arr))
	default:
		return "an object"
	}
}

func readJSON(data []byte) (*jnode, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	root, err := readValue(dec, data, 0)
	if err != nil {
		return nil, err
	}
	end := nextTokenOffset(data, dec.InputOffset())
	if _, err := dec.Token(); err != io.EOF {
		if err == nil {
			return nil, fmt.Errorf("task JSON: unexpected data after the task object at %s", lineCol(data, end))
		}
		return nil, syntaxErr(data, dec, err)
	}
	return root, nil
}

// nextTokenOffset skips whitespace and separators from off, to point an
// error at the offending character: the decoder's own offsets count what
// it has buffered, not where the bad token starts.
func nextTokenOffset(data []byte, off int64) int64 {
	for off < int64(len(data)) {
		switch data[off] {
		case ' ', '\t', '\n', '\r', ',', ':':
			off++
		default:
			return off
		}
	}
	return off
}

func syntaxErr(data []byte, dec *json.Decoder, err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Errorf("task JSON: invalid syntax at %s: %s", lineCol(data, nextTokenOffset(data, dec.InputOffset())), se.Error())
	}
	if err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
		return errors.New("task JSON: unexpected end of input")
	}
	return fmt.Errorf("task JSON: %w", err)
}

func lineCol(data []byte, off int64) string {
	off = min(max(off, 0), int64(len(data)))
	before := data[:off]
	line := bytes.Count(before, []byte{'\n'}) + 1
	col := int(off) - bytes.LastIndexByte(before, '\n')
	return fmt.Sprintf("line %d, column %d", line, col)
}

func readValue(dec *json.Decoder, data []byte, depth int) (*jnode, error) {
	if depth > maxJSONDepth {
		return nil, fmt.Errorf("task JSON: nesting deeper than %d levels at %s", maxJSONDepth, lineCol(data, dec.InputOffset()))
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, syntaxErr(data, dec, err)
	}
	switch v := tok.(type) {
	case json.Delim:
		switch v {
		case '{':
			n := &jnode{kind: 'o'}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, syntaxErr(data, dec, err)
				}
				key, _ := kt.(string)
				val, err := readValue(dec, data, depth+1)
				if err != nil {
					return nil, err
				}
				n.keys = append(n.keys, key)
				n.vals = append(n.vals, val)
			}
			if _, err := dec.Token(); err != nil {
				return nil, syntaxErr(data, dec, err)
			}
			return n, nil
		case '[':
			n := &jnode{kind: 'a'}
			for dec.More() {
				val, err := readValue(dec, data, depth+1)
				if err != nil {
					return nil, err
				}
				n.arr = append(n.arr, val)
			}
			if _, err := dec.Token(); err != nil {
				return nil, syntaxErr(data, dec, err)
			}
			return n, nil
		}
		return nil, fmt.Errorf("task JSON: unexpected %q at %s", rune(v), lineCol(data, dec.InputOffset()))
	case json.Number:
		return &jnode{kind: 'n', num: string(v)}, nil
	case string:
		return &jnode{kind: 's', str: v}, nil
	case bool:
		return &jnode{kind: 'b', b: v}, nil
	case nil:
		return &jnode{kind: 'z'}, nil
	}
	return nil, fmt.Errorf("task JSON: unexpected token %v", tok)
}

// object checks that n is an object whose keys are all in allowed, each at
// most once, and that every key in required is present. It returns the
// fields by name.
func object(path string, n *jnode, allowed, required []string, what string) (map[string]*jnode, error) {
	if n.kind != 'o' {
		return nil, verr(path, "must be an object", n.describe())
	}
	m := make(map[string]*jnode, len(n.keys))
	for i, k := range n.keys {
		kp := joinPath(path, k)
		if !slices.Contains(allowed, k) {
			return nil, verr(kp, "unknown field"+what+" (valid fields: "+strings.Join(allowed, ", ")+")", "")
		}
		if _, dup := m[k]; dup {
			return nil, verr(kp, "duplicate field", "")
		}
		m[k] = n.vals[i]
	}
	for _, k := range required {
		if _, ok := m[k]; !ok {
			return nil, verr(joinPath(path, k), "missing required field"+what, "")
		}
	}
	return m, nil
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// number reads a finite JSON number.
func number(path string, n *jnode) (float64, error) {
	if n.kind != 'n' {
		return 0, verr(path, "must be a number", n.describe())
	}
	v, err := strconv.ParseFloat(n.num, 64)
	if err != nil && !math.IsInf(v, 0) {
		return 0, verr(path, "must be a number", n.describe())
	}
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, verr(path, "must be finite", n.num)
	}
	return v, nil
}

// integer reads a JSON number that must be a whole number; rule (the
// field's rule, whose range Validate checks) is the message when it is
// not one, or too large for an int to hold it exactly.
func integer(path string, n *jnode, rule string) (int, error) {
	v, err := number(path, n)
	if err != nil {
		return 0, err
	}
	if v != math.Trunc(v) || math.Abs(v) > 1<<53 {
		return 0, verr(path, rule, n.num)
	}
	return int(v), nil
}

// vector reads an array of finite numbers of length d.
func vector(path string, n *jnode, d int) ([]float64, error) {
	if n.kind != 'a' {
		return nil, verr(path, "must be an array of "+strconv.Itoa(d)+" numbers", n.describe())
	}
	if len(n.arr) != d {
		return nil, verr(path, "must have length d = "+strconv.Itoa(d), "length "+strconv.Itoa(len(n.arr)))
	}
	v := make([]float64, d)
	for i, e := range n.arr {
		x, err := number(idx(path, i), e)
		if err != nil {
			return nil, err
		}
		v[i] = x
	}
	return v, nil
}

var taskFields = []string{"name", "d", "prior", "factors", "true_z"}

// ParseTask reads and validates a task in the JSON format of DESIGN.md. It
// is strict: unknown or duplicate fields, wrong types and every rule of
// Validate are errors naming the JSON path, the rule and the offending
// value (e.g. "factors[17].sigma: must be > 0, got -1"). It never panics.
// It reads the shape (fields, types, lengths, numbers a float64 holds);
// the rules on values are Validate's, called last, except that d is
// checked (checkDim) before any vector of length d is read and a full-rank
// precision is factorised (factorPrecision) as its prior is built.
func ParseTask(data []byte) (*Task, error) {
	root, err := readJSON(data)
	if err != nil {
		return nil, err
	}
	top, err := object("", root, taskFields, []string{"d", "prior", "factors"}, "")
	if err != nil {
		if root.kind != 'o' {
			return nil, verr("task", "must be a JSON object", root.describe())
		}
		return nil, err
	}
	t := &Task{}
	if n, ok := top["name"]; ok {
		if n.kind != 's' {
			return nil, verr("name", "must be a string", n.describe())
		}
		t.Name = n.str
	}
	if t.D, err = integer("d", top["d"], dimRule); err != nil {
		return nil, err
	}
	if err := checkDim("d", t.D); err != nil {
		return nil, err
	}
	if t.Prior, err = parsePrior(top["prior"], t.D); err != nil {
		return nil, err
	}
	fs := top["factors"]
	if fs.kind != 'a' {
		return nil, verr("factors", "must be an array of factor objects", fs.describe())
	}
	t.Factors = make([]Likelihood, len(fs.arr))
	for i, fn := range fs.arr {
		if t.Factors[i], err = parseFactor(idx("factors", i), fn, t.D); err != nil {
			return nil, err
		}
	}
	if n, ok := top["true_z"]; ok {
		if t.TrueZ, err = vector("true_z", n, t.D); err != nil {
			return nil, err
		}
	}
	if err := t.Validate(); err != nil {
		return nil, err
	}
	return t, nil
}

// typeOf reads the "type" field of a factor or prior object, before its
// other fields can be checked against that type.
func typeOf(path string, n *jnode, valid []string) (string, error) {
	if n.kind != 'o' {
		return "", verr(path, "must be an object", n.describe())
	}
	i := slices.Index(n.keys, "type")
	if i < 0 {
		return "", verr(path+".type", "missing required field (one of "+strings.Join(valid, ", ")+")", "")
	}
	tn := n.vals[i]
	if tn.kind != 's' || !slices.Contains(valid, tn.str) {
		return "", verr(path+".type", "must be one of "+strings.Join(valid, ", "), tn.describe())
	}
	return tn.str, nil
}

func parsePrior(n *jnode, d int) (Prior, error) {
	const path = "prior"
	typ, err := typeOf(path, n, PriorFamilies)
	if err != nil {
		return nil, err
	}
	fields := map[string][]string{
		DiagGaussianFamily:     {"type", "loc", "scale"},
		DiagLaplaceFamily:      {"type", "loc", "scale"},
		DiagStudentTFamily:     {"type", "loc", "scale", "df"},
		FullRankGaussianFamily: {"type", "loc", "precision"},
	}[typ]
	m, err := object(path, n, fields, fields, " for type "+typ)
	if err != nil {
		return nil, err
	}
	loc, err := vector(path+".loc", m["loc"], d)
	if err != nil {
		return nil, err
	}
	if typ == FullRankGaussianFamily {
		prec, err := matrix(path+".precision", m["precision"], d)
		if err != nil {
			return nil, err
		}
		chol, err := factorPrecision(path+".precision", prec, d)
		if err != nil {
			return nil, err
		}
		return fullRankFromCholesky(loc, prec, chol), nil
	}
	scale, err := vector(path+".scale", m["scale"], d)
	if err != nil {
		return nil, err
	}
	switch typ {
	case DiagGaussianFamily:
		return &DiagGaussian{Loc: loc, Scale: scale}, nil
	case DiagLaplaceFamily:
		return &DiagLaplace{Loc: loc, Scale: scale}, nil
	}
	df, err := number(path+".df", m["df"])
	if err != nil {
		return nil, err
	}
	return &DiagStudentT{Loc: loc, Scale: scale, DF: df}, nil
}

// matrix reads a d×d array of rows into a row-major slice.
func matrix(path string, n *jnode, d int) ([]float64, error) {
	if n.kind != 'a' {
		return nil, verr(path, "must be a d×d array of rows", n.describe())
	}
	if len(n.arr) != d {
		return nil, verr(path, "must have d = "+strconv.Itoa(d)+" rows", strconv.Itoa(len(n.arr))+" rows")
	}
	out := make([]float64, 0, d*d)
	for i, r := range n.arr {
		row, err := vector(idx(path, i), r, d)
		if err != nil {
			return nil, err
		}
		out = append(out, row...)
	}
	return out, nil
}

var factorFields = map[string][]string{
	GaussianFamily:       {"type", "y", "sigma"},
	LinGaussianFamily:    {"type", "x", "y", "sigma"},
	LinStudentTFamily:    {"type", "x", "y", "sigma", "df"},
	BernoulliLogitFamily: {"type", "x", "y"},
	BinomialLogitFamily:  {"type", "x", "y", "trials"},
}

func parseFactor(path string, n *jnode, d int) (Likelihood, error) {
	typ, err := typeOf(path, n, LikelihoodFamilies)
	if err != nil {
		return nil, err
	}
	fields := factorFields[typ]
	m, err := object(path, n, fields, fields, " for type "+typ)
	if err != nil {
		return nil, err
	}
	if typ == GaussianFamily {
		y, err := vector(path+".y", m["y"], d)
		if err != nil {
			return nil, err
		}
		sigma, err := number(path+".sigma", m["sigma"])
		if err != nil {
			return nil, err
		}
		return &Gaussian{Y: y, Sigma: sigma}, nil
	}
	x, err := vector(path+".x", m["x"], d)
	if err != nil {
		return nil, err
	}
	y, err := number(path+".y", m["y"])
	if err != nil {
		return nil, err
	}
	switch typ {
	case BernoulliLogitFamily:
		return &BernoulliLogit{X: x, Y: y}, nil
	case BinomialLogitFamily:
		trials, err := integer(path+".trials", m["trials"], trialsRule)
		if err != nil {
			return nil, err
		}
		return &BinomialLogit{X: x, Y: y, Trials: trials}, nil
	}
	sigma, err := number(path+".sigma", m["sigma"])
	if err != nil {
		return nil, err
	}
	if typ == LinGaussianFamily {
		return &LinGaussian{X: x, Y: y, Sigma: sigma}, nil
	}
	df, err := number(path+".df", m["df"])
	if err != nil {
		return nil, err
	}
	return &LinStudentT{X: x, Y: y, Sigma: sigma, DF: df}, nil
}

// JSON shapes for writing; field order follows DESIGN.md.
type (
	taskJSON struct {
		Name    string    `json:"name,omitempty"`
		D       int       `json:"d"`
		Prior   any       `json:"prior"`
		Factors []any     `json:"factors"`
		TrueZ   []float64 `json:"true_z,omitempty"`
	}
	diagPriorJSON struct {
		Type  string    `json:"type"`
		Loc   []float64 `json:"loc"`
		Scale []float64 `json:"scale"`
	}
	studentPriorJSON struct {
		Type  string    `json:"type"`
		Loc   []float64 `json:"loc"`
		Scale []float64 `json:"scale"`
		DF    float64   `json:"df"`
	}
	fullRankPriorJSON struct {
		Type      string      `json:"type"`
		Loc       []float64   `json:"loc"`
		Precision [][]float64 `json:"precision"`
	}
	gaussianJSON struct {
		Type  string    `json:"type"`
		Y     []float64 `json:"y"`
		Sigma float64   `json:"sigma"`
	}
	linGaussianJSON struct {
		Type  string    `json:"type"`
		X     []float64 `json:"x"`
		Y     float64   `json:"y"`
		Sigma float64   `json:"sigma"`
	}
	linStudentTJSON struct {
		Type  string    `json:"type"`
		X     []float64 `json:"x"`
		Y     float64   `json:"y"`
		Sigma float64   `json:"sigma"`
		DF    float64   `json:"df"`
	}
	bernoulliJSON struct {
		Type string    `json:"type"`
		X    []float64 `json:"x"`
		Y    float64   `json:"y"`
	}
	binomialJSON struct {
		Type   string    `json:"type"`
		X      []float64 `json:"x"`
		Y      float64   `json:"y"`
		Trials int       `json:"trials"`
	}
)

// MarshalTask validates t and writes it as task JSON (one line). Numbers
// are written in the shortest form that reads back to the same float64,
// so ParseTask(MarshalTask(t)) reproduces t exactly.
func MarshalTask(t *Task) ([]byte, error) {
	if err := t.Validate(); err != nil {
		return nil, fmt.Errorf("marshal task: %w", err)
	}
	out := taskJSON{Name: t.Name, D: t.D, Factors: make([]any, len(t.Factors)), TrueZ: t.TrueZ}
	switch p := t.Prior.(type) {
	case *DiagGaussian:
		out.Prior = diagPriorJSON{p.Family(), p.Loc, p.Scale}
	case *DiagLaplace:
		out.Prior = diagPriorJSON{p.Family(), p.Loc, p.Scale}
	case *DiagStudentT:
		out.Prior = studentPriorJSON{p.Family(), p.Loc, p.Scale, p.DF}
	case *FullRankGaussian:
		rows := make([][]float64, t.D)
		for i := range rows {
			rows[i] = p.Precision[i*t.D : (i+1)*t.D]
		}
		out.Prior = fullRankPriorJSON{p.Family(), p.Loc, rows}
	}
	for i, f := range t.Factors {
		switch f := f.(type) {
		case *Gaussian:
			out.Factors[i] = gaussianJSON{f.Family(), f.Y, f.Sigma}
		case *LinGaussian:
			out.Factors[i] = linGaussianJSON{f.Family(), f.X, f.Y, f.Sigma}
		case *LinStudentT:
			out.Factors[i] = linStudentTJSON{f.Family(), f.X, f.Y, f.Sigma, f.DF}
		case *BernoulliLogit:
			out.Factors[i] = bernoulliJSON{f.Family(), f.X, f.Y}
		case *BinomialLogit:
			out.Factors[i] = binomialJSON{f.Family(), f.X, f.Y, f.Trials}
		}
	}
	return json.Marshal(out)
}
