package reports

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// paperTeX is the paper's tables as its LaTeX source prints them: the
// repository's extract (testdata/paper, its source and hash in the README
// there), or the whole source where AFIN_PAPER_TEX names it.
func paperTeX(t *testing.T) string {
	t.Helper()
	p := os.Getenv("AFIN_PAPER_TEX")
	if p == "" {
		p = filepath.Join("..", "testdata", "paper", "tables.tex")
	}
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// texTabular is the tabular environment of the table labelled label.
func texTabular(t *testing.T, tex, label string) string {
	t.Helper()
	i := strings.Index(tex, `\label{`+label+`}`)
	if i < 0 {
		t.Fatalf("no table %s in the paper", label)
	}
	j := strings.Index(tex[i:], `\begin{tabular}`)
	k := strings.Index(tex[i:], `\end{tabular}`)
	if j < 0 || k < j {
		t.Fatalf("%s: no tabular", label)
	}
	return tex[i+j : i+k]
}

var texNumRE = regexp.MustCompile(`^(-?\d*\.?\d+)(?:\\times10\^(-?\d+))?`)

// texValue reads a printed number: 0.031, .010, -0.392, 7.24{\times}10^{-7},
// \mathbf{0.012}.
func texValue(t *testing.T, s string) float64 {
	t.Helper()
	c := strings.NewReplacer(`\mathbf`, "", "{", "", "}", "", " ", "", `\mathrm`, "").Replace(s)
	m := texNumRE.FindStringSubmatch(c)
	if m == nil {
		t.Fatalf("not a number: %q", s)
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		t.Fatal(err)
	}
	if m[2] != "" {
		e, _ := strconv.Atoi(m[2])
		// Parse the printed digits with the exponent, not a product, so
		// 7.24e-7 is the same float64 as the JSON's 7.24e-07.
		if v, err = strconv.ParseFloat(m[1]+"e"+strconv.Itoa(e), 64); err != nil {
			t.Fatal(err)
		}
	}
	return v
}

type texCell struct {
	mean float64
	sd   *float64
}

func texCellOf(t *testing.T, mean, sd string) texCell {
	c := texCell{mean: texValue(t, mean)}
	if sd != "" {
		v := texValue(t, sd)
		c.sd = &v
	}
	return c
}

// paperTables reads every cell of the paper's tables that
// paper_values.json carries, keyed as PaperValue.key would key them.
func paperTables(t *testing.T, tex string) map[string]texCell {
	key := func(suite, group, method, variant, metric string) string {
		return PaperValue{Suite: suite, Group: group, Method: method, Variant: variant, Metric: metric}.key()
	}
	out := map[string]texCell{}
	put := func(k string, c texCell) {
		if _, dup := out[k]; dup {
			t.Fatalf("cell %s read twice", k)
		}
		out[k] = c
	}

	// Decoder table: rows "Gaussian"/"Flow" under Synthetic and UCI, cells
	// $m \err{sd}$ for M1, M2, W2, time.
	body := texTabular(t, tex, "tab:gaussian_flow_decoder_summary")
	rowRE := regexp.MustCompile(`(Gaussian|Flow)\s*((?:&[^&]+){4})`)
	cellRE := regexp.MustCompile(`\$(.*?)\\err\{(.*?)\}\s*\$`)
	group := ""
	for _, row := range strings.Split(body, `\\`) {
		if strings.Contains(row, "Synthetic") {
			group = "synthetic"
		}
		if strings.Contains(row, "UCI") {
			group = "uci"
		}
		m := rowRE.FindStringSubmatch(row)
		if m == nil {
			continue
		}
		cells := strings.Split(m[2], "&")[1:]
		for i, metric := range []string{"m1", "m2", "sw2", "seconds"} {
			c := cellRE.FindStringSubmatch(cells[i])
			if c == nil {
				t.Fatalf("decoder table: cell %q", cells[i])
			}
			put(key("decoders", group, "afin", strings.ToLower(m[1]), metric), texCellOf(t, c[1], c[2]))
		}
	}

	methods := []string{"afin", "afin-snis", "nuts", "frvi"}
	splits := []struct{ tex, group string }{{`OOD \(d\)`, "ood_d"}, {`OOD \(N\)`, "ood_n"}, {`OOD \(d,N\)`, "ood_dn"}}
	// Extrapolation, SW2 with the seconds below each entry.
	body = texTabular(t, tex, "tab:extrapolate-highdn")
	mkRE := regexp.MustCompile(`\\makecell\{\\\((.*?)\\\)\\\\\[3pt\]\\\((.*?)\\\)\}`)
	seconds := map[string]string{}
	for _, sp := range splits {
		i := strings.Index(body, sp.tex+"\n")
		cells := mkRE.FindAllStringSubmatch(body[i:], 4)
		if i < 0 || len(cells) != 4 {
			t.Fatalf("extrapolation SW2 table: split %s", sp.tex)
		}
		for j, m := range methods {
			ms := strings.SplitN(unbold(cells[j][1]), `{\pm}`, 2)
			put(key("extrapolation", sp.group, m, "", "sw2"), texCellOf(t, ms[0], ms[1]))
			s := strings.ReplaceAll(strings.ReplaceAll(unbold(cells[j][2]), `\mathrm{s}`, ""), "}", "")
			put(key("extrapolation", sp.group, m, "", "seconds"), texCellOf(t, s, ""))
			seconds[sp.group+"|"+m] = s
		}
	}
	// Extrapolation M1 and M2, with the seconds in parentheses (the same
	// runs as the SW2 table: the times must agree).
	pmRE := regexp.MustCompile(`&\s*\\\((.*?)\\\)\s*\((.*?)s\)`)
	for _, tb := range []struct{ label, metric string }{{"tab:extrapolate-highdn-m1", "m1"}, {"tab:extrapolate-highdn-m2", "m2"}} {
		body = texTabular(t, tex, tb.label)
		for _, sp := range splits {
			i := strings.Index(body, sp.tex+"\n")
			cells := pmRE.FindAllStringSubmatch(body[i:], 4)
			if i < 0 || len(cells) != 4 {
				t.Fatalf("%s: split %s", tb.label, sp.tex)
			}
			for j, m := range methods {
				ms := strings.SplitN(unbold(cells[j][1]), `\pm`, 2)
				put(key("extrapolation", sp.group, m, "", tb.metric), texCellOf(t, ms[0], ms[1]))
				if a, b := texValue(t, cells[j][2]), texValue(t, seconds[sp.group+"|"+m]); a != b {
					t.Errorf("%s %s %s: %gs, the SW2 table says %gs", tb.label, sp.group, m, a, b)
				}
			}
		}
	}

	// SNIS diagnostics: a split's rows, one method per row, then its four
	// cells on lines of their own.
	body = texTabular(t, tex, "tab:snis-diagnostics")
	snisRE := regexp.MustCompile(`^& \$(.*?) \\err\{(.*)\}\$`)
	frviRE := regexp.MustCompile(`^& FRVI\+SNIS \((\w+)\)`)
	group, method, variant, k := "", "", "", 0
	for _, line := range strings.Split(body, "\n") {
		line = strings.TrimSpace(line)
		for _, g := range []string{"Easy", "Medium", "Hard", "Overall"} {
			if strings.HasPrefix(line, g) {
				group = map[string]string{"Overall": "all"}[g]
				if group == "" {
					group = strings.ToLower(g)
				}
			}
		}
		if strings.HasPrefix(line, "& AFIN+SNIS") {
			method, variant, k = "afin-snis", "", 0
			continue
		}
		if m := frviRE.FindStringSubmatch(line); m != nil {
			method, variant, k = "frvi-snis", m[1], 0
			continue
		}
		if m := snisRE.FindStringSubmatch(line); m != nil {
			if k >= 4 {
				t.Fatalf("SNIS table: a fifth cell for %s %s", group, method)
			}
			metric := []string{"pareto_k", "max_weight", "entropy_ratio", "energy_gap"}[k]
			k++
			put(key("snis", group, method, variant, metric), texCellOf(t, m[1], m[2]))
		}
	}
	return out
}

// unbold drops \mathbf{ (bold entries) and a trailing brace it leaves.
func unbold(s string) string {
	if strings.Contains(s, `\mathbf{`) {
		s = strings.Replace(s, `\mathbf{`, "", 1)
		s = strings.TrimSuffix(s, "}")
	}
	return s
}

// TestPaperValuesMatchTeX reads the paper's tables from its LaTeX source
// and requires every value of paper_values.json to be printed there (the
// per-suite headlines are the decoder table's Gaussian rows), and every
// cell of those tables to be in the data file: a typo in either direction
// fails.
func TestPaperValuesMatchTeX(t *testing.T) {
	tex := paperTeX(t)
	cells := paperTables(t, tex)
	if len(cells) != 128 {
		t.Errorf("read %d cells from the paper's tables, want 128 (16 decoder, 24+12+12 extrapolation, 64 SNIS)", len(cells))
	}
	pv, err := Paper()
	if err != nil {
		t.Fatal(err)
	}
	used := map[string]bool{}
	for i, v := range pv.Values {
		k := v.key()
		if (v.Suite == "synthetic" || v.Suite == "uci") && v.Group == "all" && v.Method == "afin" {
			k = PaperValue{Suite: "decoders", Group: v.Suite, Method: "afin", Variant: "gaussian", Metric: v.Metric}.key()
		}
		c, ok := cells[k]
		if !ok {
			t.Errorf("values[%d] %s (%s): not a cell of the paper's tables", i, v.key(), v.Table)
			continue
		}
		used[k] = true
		sd := func(p *float64) string {
			if p == nil {
				return "none"
			}
			return fmt.Sprint(*p)
		}
		if v.Mean != c.mean || (v.SD == nil) != (c.sd == nil) || (v.SD != nil && *v.SD != *c.sd) {
			t.Errorf("values[%d] %s: %v ± %s, the paper prints %v ± %s", i, v.key(), v.Mean, sd(v.SD), c.mean, sd(c.sd))
		}
		if math.IsNaN(v.Mean) {
			t.Errorf("values[%d]: NaN", i)
		}
	}
	for k := range cells {
		if !used[k] {
			t.Errorf("paper cell %s is not in paper_values.json", k)
		}
	}
}
