// Command benchtable turns `go test -bench` output of the matrix-kernel
// benchmarks into the tables of internal/gemm's and afin/cpu's package
// docs and writes them into doc.go in place: the indented block after
// the paragraph that names `go tool task bench:gemm` is replaced.
//
//	go run ./tools/benchtable -kind gemm -doc internal/gemm/doc.go OUT...
//	go run ./tools/benchtable -kind forward -doc afin/cpu/doc.go OUT...
//
// gemm reads BenchmarkSgemmRatio lines (GFLOP/s, peer-GFLOP/s, ratio);
// forward reads BenchmarkForwardKernels lines (GFLOP/s). With several
// lines for one benchmark (-count, or several files) the median is shown.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

func main() {
	kind := flag.String("kind", "gemm", "gemm (BenchmarkSgemmRatio) or forward (BenchmarkForwardKernels)")
	doc := flag.String("doc", "", "doc.go to rewrite (empty: print the table)")
	flag.Parse()
	if err := run(*kind, *doc, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "benchtable:", err)
		os.Exit(2)
	}
}

// result is one benchmark line's metrics by unit.
type result map[string]float64

var line = regexp.MustCompile(`^Benchmark(\S+?)(-\d+)?\s+\d+\s+(.*)$`)

// parse returns, per benchmark name, the metrics of every line for it.
func parse(files []string) (map[string][]result, []string, error) {
	out := map[string][]result{}
	var order []string
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			return nil, nil, err
		}
		sc := bufio.NewScanner(fh)
		for sc.Scan() {
			m := line.FindStringSubmatch(sc.Text())
			if m == nil {
				continue
			}
			fields := strings.Fields(m[3])
			r := result{}
			for i := 0; i+1 < len(fields); i += 2 {
				v, err := strconv.ParseFloat(fields[i], 64)
				if err != nil {
					return nil, nil, fmt.Errorf("%s: %q: %w", f, sc.Text(), err)
				}
				r[fields[i+1]] = v
			}
			if _, ok := out[m[1]]; !ok {
				order = append(order, m[1])
			}
			out[m[1]] = append(out[m[1]], r)
		}
		fh.Close()
		if err := sc.Err(); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", f, err)
		}
	}
	if len(out) == 0 {
		return nil, nil, fmt.Errorf("no benchmark lines in %v", files)
	}
	return out, order, nil
}

func median(rs []result, unit string) float64 {
	var v []float64
	for _, r := range rs {
		if x, ok := r[unit]; ok {
			v = append(v, x)
		}
	}
	if len(v) == 0 {
		return 0
	}
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

func run(kind, doc string, files []string) error {
	res, order, err := parse(files)
	if err != nil {
		return err
	}
	var table []string
	switch kind {
	case "gemm":
		table = gemmTable(res, order)
	case "forward":
		table = forwardTable(res, order)
	default:
		return fmt.Errorf("unknown -kind %q", kind)
	}
	if len(table) == 0 {
		return fmt.Errorf("no %s benchmarks in %v", kind, files)
	}
	if doc == "" {
		for _, l := range table {
			fmt.Println(l)
		}
		return nil
	}
	return rewrite(doc, table)
}

// gemmTable: one row per shape, one column per kernel-vs-peer pair, each
// "afin / peer = ratio" in GFLOP/s.
func gemmTable(res map[string][]result, order []string) []string {
	var shapes, pairs []string
	cell := map[[2]string]string{}
	for _, name := range order {
		rest, ok := strings.CutPrefix(name, "SgemmRatio/")
		if !ok {
			continue
		}
		shape, pair, ok := strings.Cut(rest, "/")
		if !ok {
			continue
		}
		if !slices.Contains(shapes, shape) {
			shapes = append(shapes, shape)
		}
		if !slices.Contains(pairs, pair) {
			pairs = append(pairs, pair)
		}
		rs := res[name]
		cell[[2]string{shape, pair}] = fmt.Sprintf("%.1f / %.1f = %.2f",
			median(rs, "GFLOP/s"), median(rs, "peer-GFLOP/s"), median(rs, "ratio"))
	}
	rows := [][]string{append([]string{"shape"}, pairs...)}
	for _, s := range shapes {
		row := []string{s}
		for _, p := range pairs {
			c := cell[[2]string{s, p}]
			if c == "" {
				c = "—"
			}
			row = append(row, c)
		}
		rows = append(rows, row)
	}
	return align(rows)
}

// forwardTable: one row per config and (d, N), one column per kernel
// (its <kernel>-GFLOP/s, and the ratio to the row's first kernel).
func forwardTable(res map[string][]result, order []string) []string {
	var cases, kernels []string
	rate := map[[2]string]float64{}
	for _, name := range order {
		c, ok := strings.CutPrefix(name, "ForwardKernels/")
		if !ok {
			continue
		}
		cases = append(cases, c)
		var units []string
		for u := range res[name][0] {
			if k, ok := strings.CutSuffix(u, "-GFLOP/s"); ok {
				units = append(units, k)
			}
		}
		slices.SortFunc(units, func(a, b string) int { return slices.Index(kernelOrder, a) - slices.Index(kernelOrder, b) })
		for _, k := range units {
			if !slices.Contains(kernels, k) {
				kernels = append(kernels, k)
			}
			rate[[2]string{c, k}] = median(res[name], k+"-GFLOP/s")
		}
	}
	if len(kernels) == 0 {
		return nil
	}
	rows := [][]string{append([]string{"config/(d,N)"}, kernels...)}
	for _, c := range cases {
		row := []string{c}
		first := rate[[2]string{c, kernels[0]}]
		for _, k := range kernels {
			r, ok := rate[[2]string{c, k}]
			switch {
			case !ok:
				row = append(row, "—")
			case k == kernels[0] || first == 0:
				row = append(row, fmt.Sprintf("%.1f", r))
			default:
				row = append(row, fmt.Sprintf("%.1f (%.2f×)", r, r/first))
			}
		}
		rows = append(rows, row)
	}
	return align(rows)
}

// kernelOrder is internal/gemm's order, fastest first.
var kernelOrder = []string{"avx512", "avx2", "neon", "generic"}

func align(rows [][]string) []string {
	var width []int
	for _, r := range rows {
		for i, c := range r {
			if i >= len(width) {
				width = append(width, 0)
			}
			width[i] = max(width[i], len([]rune(c)))
		}
	}
	var out []string
	for _, r := range rows {
		var b strings.Builder
		for i, c := range r {
			b.WriteString(c)
			if i < len(r)-1 {
				b.WriteString(strings.Repeat(" ", width[i]-len([]rune(c))+2))
			}
		}
		out = append(out, b.String())
	}
	return out
}

// rewrite replaces, in doc, the indented comment block ("//\t…" lines)
// that follows the first line naming bench:gemm (after one "//" line).
func rewrite(doc string, table []string) error {
	src, err := os.ReadFile(doc)
	if err != nil {
		return err
	}
	lines := strings.Split(string(src), "\n")
	at := -1
	for i, l := range lines {
		if strings.HasPrefix(l, "//") && strings.Contains(l, "bench:gemm") {
			at = i
			break
		}
	}
	if at < 0 || at+2 >= len(lines) || lines[at+1] != "//" {
		return fmt.Errorf("%s: no paragraph naming bench:gemm followed by a table block", doc)
	}
	start := at + 2
	end := start
	for end < len(lines) && strings.HasPrefix(lines[end], "//\t") {
		end++
	}
	var block []string
	for _, l := range table {
		block = append(block, "//\t"+l)
	}
	out := append(append(append([]string{}, lines[:start]...), block...), lines[end:]...)
	return os.WriteFile(doc, []byte(strings.Join(out, "\n")), 0o644)
}
