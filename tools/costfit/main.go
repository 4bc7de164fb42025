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
	check := flag.String("check", "", "check this model file against the runs instead of fitting one (e.g. a model fitted to smoke runs against quick ones)")
	holdout := flag.Bool("holdout", false, "also fit to half the tasks and check on the other half (tasks the fit never saw)")
	byKey := flag.Bool("terms", false, "check the model per term key (suite/method/variant, target/KIND), not per suite")
	note := flag.String("note", "", "what the runs were (machine, load), kept in the model's fitted field")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: go run ./tools/costfit [-o FILE] [-samples FILE] [-note TEXT] RESULTS_DIR...\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	var err error
	if *check != "" {
		err = checkOnly(os.Stdout, *check, *byKey, flag.Args())
	} else {
		err = run(os.Stdout, *out, *samples, *note, *byKey, *holdout, flag.Args())
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "costfit:", err)
		os.Exit(1)
	}
}

// load reads the records of dirs.
func load(dirs []string) ([]records.Record, error) {
	if len(dirs) == 0 {
		return nil, fmt.Errorf("no results directory given")
	}
	var recs []records.Record
	for _, d := range dirs {
		l, err := records.Load(d)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", d, err)
		}
		recs = append(recs, l.Records...)
	}
	return recs, nil
}

// checkOnly checks the model in path against the runs in dirs.
func checkOnly(w io.Writer, path string, byKey bool, dirs []string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var m bench.CostModel
	if err := json.Unmarshal(data, &m); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	recs, err := load(dirs)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "the model of %s (%s) against %s:\n", path, m.Fitted, strings.Join(dirs, ", "))
	printCheck(w, bench.CheckCostModel(&m, bench.CostSamples(recs), byKey))
	return nil
}

func run(w io.Writer, out, samplesOut, note string, byKey, holdout bool, dirs []string) error {
	recs, err := load(dirs)
	if err != nil {
		return err
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
	fmt.Fprintln(w, "the model against the samples it was fitted to:")
	printCheck(w, bench.CheckCostModel(m, ss, byKey))
	if holdout {
		a, b := bench.SplitCostSamples(ss)
		half, err := bench.FitCostModel(a, "half")
		if err != nil {
			return err
		}
		fmt.Fprintln(w, "a model fitted to half the tasks, against the other half:")
		printCheck(w, bench.CheckCostModel(half, b, byKey))
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

func printCheck(w io.Writer, cs []bench.CostCheck) {
	fmt.Fprintf(w, "%-10s %-30s %7s %12s %12s %8s\n", "profile", "suite", "samples", "measured_s", "estimate_s", "error")
	for _, c := range cs {
		fmt.Fprintf(w, "%-10s %-30s %7d %12.1f %12.1f %+7.1f%%\n", c.Profile, c.Suite, c.Samples, c.Measured, c.Estimate, 100*c.RelErr())
	}
}

// writeSamples writes the samples as CSV (bench.ReadCostSamples reads it).
func writeSamples(path string, ss []bench.CostSample) error {
	var b strings.Builder
	cw := csv.NewWriter(&b)
	cw.Write(bench.CostSampleHeader)
	for _, s := range ss {
		cw.Write([]string{s.Profile, s.Suite, s.Key, s.Method, s.Variant, s.Task,
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
