// Command costfit refits the cost model `afin bench --estimate`, the
// shard partition and the progress ETA read (bench/costmodel.json) from
// the CPU seconds measured runs left in their records, and prints how far
// the new model's estimate of each measured suite is from what it
// measured:
//
//	go run ./tools/costfit results-smoke results-quick ...
//
// Fit from runs with --workers 1 (a unit sharing the process with another
// carries only a share of its CPU time, and is left out) and with an empty
// reference cache ($AFIN_CACHE_DIR), so the references' cost is measured
// rather than read back. With -samples it also writes the samples it
// fitted, which bench's tests check the committed model against.
package main

import (
	"encoding/csv"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/afin-bench/afin/bench"
	"github.com/afin-bench/afin/internal/atomicfile"
	// The records name methods; the catalogue knows the ones linked.
	_ "github.com/afin-bench/afin/methods"
	"github.com/afin-bench/afin/records"
)

func main() {
	out := flag.String("o", "bench/costmodel.json", "the model file to write (empty: print only)")
	samples := flag.String("samples", "bench/testdata/costsamples.csv", "where to write the fitted samples (empty: nowhere)")
	note := flag.String("note", "", "what the runs were (machine, load), kept in the model's fitted field")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: go run ./tools/costfit [-o FILE] [-samples FILE] [-note TEXT] RESULTS_DIR...\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if err := run(os.Stdout, *out, *samples, *note, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "costfit:", err)
		os.Exit(1)
	}
}

func run(w io.Writer, out, samplesOut, note string, dirs []string) error {
	if len(dirs) == 0 {
		return fmt.Errorf("no results directory given")
	}
	var recs []records.Record
	for _, d := range dirs {
		l, err := records.Load(d)
		if err != nil {
			return fmt.Errorf("%s: %w", d, err)
		}
		recs = append(recs, l.Records...)
	}
	ss := bench.CostSamples(recs)
	fitted := fmt.Sprintf("%d samples from %s", len(ss), strings.Join(dirs, ", "))
	if note != "" {
		fitted += "; " + note
	}
	m, err := bench.FitCostModel(ss, fitted)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "%-10s %-14s %7s %12s %12s %8s\n", "profile", "suite", "samples", "measured_s", "estimate_s", "error")
	for _, c := range bench.CheckCostModel(m, ss) {
		fmt.Fprintf(w, "%-10s %-14s %7d %12.1f %12.1f %+7.1f%%\n", c.Profile, c.Suite, c.Samples, c.Measured, c.Estimate, 100*c.RelErr())
	}
	if out != "" {
		data, err := json.MarshalIndent(m, "", "  ")
		if err != nil {
			return err
		}
		if err := atomicfile.WriteFile(out, append(data, '\n')); err != nil {
			return fmt.Errorf("writing the model: %w", err)
		}
		fmt.Fprintf(w, "wrote %s (%d terms)\n", out, len(m.Terms))
	}
	if samplesOut != "" {
		if err := writeSamples(samplesOut, ss); err != nil {
			return err
		}
		fmt.Fprintf(w, "wrote %s (%d samples)\n", samplesOut, len(ss))
	}
	return nil
}

// writeSamples writes the samples as CSV (bench.ReadCostSamples reads it).
func writeSamples(path string, ss []bench.CostSample) error {
	var b strings.Builder
	cw := csv.NewWriter(&b)
	cw.Write(bench.CostSampleHeader)
	for _, s := range ss {
		cw.Write([]string{s.Profile, s.Suite, s.Key, s.Method, s.Variant,
			f(s.D), f(s.N), f(s.Work), f(s.Seconds)})
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return err
	}
	if err := atomicfile.WriteFile(path, []byte(b.String())); err != nil {
		return fmt.Errorf("writing the samples: %w", err)
	}
	return nil
}

func f(x float64) string { return strconv.FormatFloat(x, 'g', 6, 64) }
