// Command extexact is a small external method for the exec tests: it
// follows the exec protocol (AFIN_TASK, AFIN_BUDGET, AFIN_SEED,
// AFIN_DRAWS_OUT, AFIN_DIAGNOSTICS_OUT) and draws from the exact
// posterior of a conjugate task with the same random stream as the
// built-in exact method, so its draws equal exact's at the same seed.
// With -mode it misbehaves on purpose instead.
package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/afin-bench/afin/factor"
	"github.com/afin-bench/afin/internal/streams"
	"github.com/afin-bench/afin/posterior"
)

func main() {
	mode := flag.String("mode", "exact", "exact, crash, hang, garbage, wrongdim or weighted")
	flag.Parse()
	if err := run(*mode); err != nil {
		fmt.Fprintln(os.Stderr, "extexact:", err)
		os.Exit(1)
	}
}

func run(mode string) error {
	switch mode {
	case "crash":
		fmt.Fprintln(os.Stderr, "extexact: the sampler diverged at iteration 17")
		os.Exit(3)
	case "hang":
		fmt.Fprintln(os.Stderr, "extexact: warming up")
		time.Sleep(time.Hour)
	case "garbage":
		return os.WriteFile(os.Getenv("AFIN_DRAWS_OUT"), []byte("this is not,a csv\n1,2,3\n"), 0o644)
	}
	data, err := os.ReadFile(os.Getenv("AFIN_TASK"))
	if err != nil {
		return err
	}
	task, err := factor.ParseTask(data)
	if err != nil {
		return err
	}
	n, err := strconv.Atoi(os.Getenv("AFIN_BUDGET"))
	if err != nil {
		return err
	}
	seed, err := strconv.ParseUint(os.Getenv("AFIN_SEED"), 10, 64)
	if err != nil {
		return err
	}
	start := time.Now()
	mean, cov, err := factor.ExactPosterior(task)
	if err != nil {
		return err
	}
	z, err := factor.GaussianDraws(streams.New(seed, streams.ExactDraws), mean, cov, n)
	if err != nil {
		return err
	}
	d := &posterior.Draws{D: task.D, Z: z}
	switch mode {
	case "wrongdim":
		d = &posterior.Draws{D: 1, Z: z[:n]}
	case "weighted":
		d.W = make([]float64, n)
		for i := range d.W {
			d.W[i] = 1
		}
	}
	f, err := os.Create(os.Getenv("AFIN_DRAWS_OUT"))
	if err != nil {
		return err
	}
	if err := posterior.WriteCSV(f, d); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	report := fmt.Sprintf(`{"seconds": %g, "diagnostics": {"ext_draws": %d}}`, time.Since(start).Seconds(), n)
	return os.WriteFile(os.Getenv("AFIN_DIAGNOSTICS_OUT"), []byte(report), 0o644)
}
