package datasets

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ARFF is a dense ARFF file (Weka's attribute-relation format, the one
// OpenML serves) read into numbers: a numeric cell is its value, a nominal
// cell the index of its value among the attribute's declared values, and
// a missing cell ("?") is NaN.
type ARFF struct {
	Relation   string
	Attributes []Attribute
	Rows       [][]float64
	// Lines holds the 1-based source line of every row, for errors about
	// a row found after parsing.
	Lines []int
}

// Attribute is one ARFF column.
type Attribute struct {
	Name string
	// Values are a nominal attribute's declared values in declaration
	// order; nil for a numeric attribute.
	Values []string
}

// Nominal reports whether the attribute is nominal.
func (a Attribute) Nominal() bool { return a.Values != nil }

// lineError is an error at one line; its text starts with the number so
// that LoadOpenML's "path:" prefix reads as path:line.
type lineError struct {
	line int
	msg  string
}

func (e *lineError) Error() string { return fmt.Sprintf("%d: %s", e.line, e.msg) }

func errAt(line int, format string, args ...any) error {
	return &lineError{line: line, msg: fmt.Sprintf(format, args...)}
}

// ParseARFF parses dense ARFF: %-comments and blank lines anywhere,
// case-insensitive @relation, @attribute and @data, names and values
// quoted with ' or " (with backslash escapes) or bare, numeric (numeric,
// real, integer) and nominal ({a,b,...}) attributes, and "?" for a missing
// cell. Anything else (string, date and relational attributes, sparse
// rows, an undeclared nominal value, a wrong field count) is an error
// naming the line.
func ParseARFF(data []byte) (*ARFF, error) {
	a := &ARFF{}
	inData := false
	lines := bytes.Split(data, []byte("\n"))
	for i, raw := range lines {
		ln := i + 1
		line := strings.TrimSpace(strings.TrimSuffix(string(raw), "\r"))
		if i == 0 {
			line = strings.TrimPrefix(line, "\ufeff")
		}
		if line == "" || line[0] == '%' {
			continue
		}
		if inData {
			if err := a.addRow(line, ln); err != nil {
				return nil, err
			}
			continue
		}
		if line[0] != '@' {
			return nil, errAt(ln, "expected @relation, @attribute or @data before the data, got %q", clip(line))
		}
		kw, rest := splitKeyword(line)
		switch strings.ToLower(kw) {
		case "@relation":
			name, _, err := readToken(rest)
			if err != nil {
				return nil, errAt(ln, "@relation: %v", err)
			}
			a.Relation = name
		case "@attribute":
			at, err := parseAttribute(rest)
			if err != nil {
				return nil, errAt(ln, "@attribute: %v", err)
			}
			for _, b := range a.Attributes {
				if b.Name == at.Name {
					return nil, errAt(ln, "@attribute: %q declared twice", at.Name)
				}
			}
			a.Attributes = append(a.Attributes, at)
		case "@data":
			if len(a.Attributes) == 0 {
				return nil, errAt(ln, "@data before any @attribute")
			}
			inData = true
		default:
			return nil, errAt(ln, "unknown declaration %q", kw)
		}
	}
	if !inData {
		return nil, errAt(len(lines), "no @data section")
	}
	if len(a.Rows) == 0 {
		return nil, errAt(len(lines), "no data rows")
	}
	return a, nil
}

// addRow parses one data line.
func (a *ARFF) addRow(line string, ln int) error {
	if line[0] == '{' {
		return errAt(ln, "sparse ARFF rows are not supported")
	}
	cells, err := splitCells(line)
	if err != nil {
		return errAt(ln, "%v", err)
	}
	if len(cells) != len(a.Attributes) {
		return errAt(ln, "%d fields, want %d (one per @attribute)", len(cells), len(a.Attributes))
	}
	row := make([]float64, len(cells))
	for j, c := range cells {
		at := a.Attributes[j]
		switch {
		case c.text == "?" && !c.quoted:
			row[j] = math.NaN()
		case at.Nominal():
			k := indexOf(at.Values, c.text)
			if k < 0 {
				return errAt(ln, "attribute %s: value %q is not one of its declared values", at.Name, c.text)
			}
			row[j] = float64(k)
		default:
			v, err := strconv.ParseFloat(c.text, 64)
			if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
				return errAt(ln, "attribute %s: %q is not a finite number", at.Name, c.text)
			}
			row[j] = v
		}
	}
	a.Rows = append(a.Rows, row)
	a.Lines = append(a.Lines, ln)
	return nil
}

// parseAttribute reads "name type" after @attribute.
func parseAttribute(rest string) (Attribute, error) {
	name, tail, err := readToken(rest)
	if err != nil {
		return Attribute{}, err
	}
	if name == "" {
		return Attribute{}, errors.New("missing name")
	}
	typ := strings.TrimSpace(tail)
	if strings.HasPrefix(typ, "{") {
		if !strings.HasSuffix(typ, "}") {
			return Attribute{}, fmt.Errorf("%s: nominal values without a closing }", name)
		}
		cells, err := splitCells(typ[1 : len(typ)-1])
		if err != nil {
			return Attribute{}, fmt.Errorf("%s: %v", name, err)
		}
		vals := make([]string, 0, len(cells))
		for _, c := range cells {
			if c.text == "" && !c.quoted {
				return Attribute{}, fmt.Errorf("%s: empty nominal value", name)
			}
			if indexOf(vals, c.text) >= 0 {
				return Attribute{}, fmt.Errorf("%s: nominal value %q declared twice", name, c.text)
			}
			vals = append(vals, c.text)
		}
		if len(vals) == 0 {
			return Attribute{}, fmt.Errorf("%s: no nominal values", name)
		}
		return Attribute{Name: name, Values: vals}, nil
	}
	switch strings.ToLower(typ) {
	case "numeric", "real", "integer":
		return Attribute{Name: name}, nil
	case "":
		return Attribute{}, fmt.Errorf("%s: missing type", name)
	}
	return Attribute{}, fmt.Errorf("%s: unsupported type %q (only numeric, real, integer and nominal {...})", name, clip(typ))
}

// splitKeyword splits "@kw rest".
func splitKeyword(line string) (kw, rest string) {
	i := strings.IndexAny(line, " \t")
	if i < 0 {
		return line, ""
	}
	return line[:i], strings.TrimSpace(line[i:])
}

// readToken reads one name, quoted or up to the next whitespace, and
// returns the text after it.
func readToken(s string) (tok, rest string, err error) {
	s = strings.TrimLeft(s, " \t")
	if s == "" {
		return "", "", nil
	}
	if q := s[0]; q == '\'' || q == '"' {
		tok, n, err := readQuoted(s)
		return tok, s[n:], err
	}
	i := strings.IndexAny(s, " \t{")
	if i < 0 {
		return s, "", nil
	}
	return s[:i], s[i:], nil
}

// readQuoted reads a quoted string at the start of s (quote s[0]) with
// backslash escapes and returns it and the bytes consumed.
func readQuoted(s string) (string, int, error) {
	q := s[0]
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\' && i+1 < len(s):
			i++
			b.WriteByte(s[i])
		case c == q:
			return b.String(), i + 1, nil
		default:
			b.WriteByte(c)
		}
	}
	return "", 0, fmt.Errorf("unterminated quote in %q", clip(s))
}

type cell struct {
	text   string
	quoted bool
}

// splitCells splits a comma-separated list whose items are bare (trimmed)
// or quoted.
func splitCells(s string) ([]cell, error) {
	var out []cell
	for {
		s = strings.TrimLeft(s, " \t")
		var c cell
		if s != "" && (s[0] == '\'' || s[0] == '"') {
			t, n, err := readQuoted(s)
			if err != nil {
				return nil, err
			}
			c = cell{text: t, quoted: true}
			s = strings.TrimLeft(s[n:], " \t")
			if s != "" && s[0] != ',' {
				return nil, fmt.Errorf("text after the quoted value %q", t)
			}
		} else {
			i := strings.IndexByte(s, ',')
			if i < 0 {
				i = len(s)
			}
			c = cell{text: strings.TrimSpace(s[:i])}
			s = s[i:]
		}
		out = append(out, c)
		if s == "" {
			return out, nil
		}
		s = s[1:] // the comma
	}
}

func indexOf(list []string, s string) int {
	for i, v := range list {
		if v == s {
			return i
		}
	}
	return -1
}

// clip shortens text quoted in an error.
func clip(s string) string {
	if len(s) > 60 {
		return s[:57] + "..."
	}
	return s
}
