package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"text/tabwriter"

	"github.com/afin-bench/afin/posterior"
)

// summaryRow is one coordinate of `afin summary --json`; NaN (R's NA: too
// few draws, constant draws, or a measure weighted draws do not have) is
// null.
type summaryRow struct {
	Variable string `json:"variable"`
	Mean     any    `json:"mean"`
	SD       any    `json:"sd"`
	Q5       any    `json:"q5"`
	Q95      any    `json:"q95"`
	MCSEMean any    `json:"mcse_mean"`
	ESSBulk  any    `json:"ess_bulk"`
	ESSTail  any    `json:"ess_tail"`
	Rhat     any    `json:"rhat"`
}

type summaryOutput struct {
	NDraws   int          `json:"n_draws"`
	Chains   int          `json:"chains"`
	Weighted bool         `json:"weighted"`
	Rows     []summaryRow `json:"variables"`
}

func runSummary(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "summary", "--draws CSV [--json]")
	drawsPath := fs.String("draws", "", "draw CSV: afin's z1..zd[,w] (one chain) or the posterior format "+
		"(.chain,.iteration,.draw,z[1],...[,.log_weight]) that --draws-format posterior writes")
	asJSON := fs.Bool("json", false, "print the summary as JSON")
	fs.Usage = withSummaryNote(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *drawsPath == "" {
		return badInput(fmt.Errorf("--draws is required"))
	}
	f, err := os.Open(*drawsPath)
	if err != nil {
		return badInput(fmt.Errorf("--draws: %w", err))
	}
	defer f.Close()
	cd, names, err := posterior.ReadAnyCSV(f)
	if err != nil {
		return badInput(fmt.Errorf("--draws %s: %w", *drawsPath, err))
	}
	rows := posterior.Summarize(cd, names)
	if err := checkSummaryFinite(rows); err != nil {
		return err
	}
	out := summaryOutput{NDraws: cd.Len(), Chains: len(cd.Chains(0)), Weighted: cd.Weighted()}
	for _, r := range rows {
		out.Rows = append(out.Rows, summaryRow{
			Variable: r.Name, Mean: jsonNumber(r.Mean), SD: jsonNumber(r.SD), Q5: jsonNumber(r.Q5), Q95: jsonNumber(r.Q95),
			MCSEMean: jsonNumber(r.MCSEMean), ESSBulk: jsonNumber(r.ESSBulk), ESSTail: jsonNumber(r.ESSTail), Rhat: jsonNumber(r.Rhat),
		})
	}
	if *asJSON {
		return json.NewEncoder(env.stdout).Encode(out)
	}
	return printSummary(env.stdout, &out, rows)
}

// withSummaryNote appends to the usage what the columns mean, so a user
// comparing with R or ArviZ knows which definitions are used.
// It writes to fs.Output() at call time: the flag package calls Usage
// with a silenced output while parseQuiet parses.
func withSummaryNote(fs *flag.FlagSet) func() {
	usage := fs.Usage
	return func() {
		usage()
		fmt.Fprint(fs.Output(), `
Columns are R posterior's summarise_draws (1.4): mean, sd, q5/q95 (type-7
quantiles), mcse_mean, ess_bulk, ess_tail, rhat (rank-normalised split-R̂),
over the chains of the .chain column (one chain when there is none). Weighted
draws (w or .log_weight) are summarised as the weighted distribution: weighted
mean, sd and quantiles, the self-normalised MCSE, Kish's ESS as ess_bulk, and
no tail ESS or R̂ (NA).
`)
	}
}

func printSummary(w io.Writer, out *summaryOutput, rows []posterior.CoordSummary) error {
	kind := "unweighted"
	if out.Weighted {
		kind = "weighted (ess_bulk is Kish's ESS)"
	}
	fmt.Fprintf(w, "%d draws, %d chain(s), %s\n", out.NDraws, out.Chains, kind)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "variable\tmean\tsd\tq5\tq95\tmcse_mean\tess_bulk\tess_tail\trhat\t")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", r.Name,
			num4(r.Mean), num4(r.SD), num4(r.Q5), num4(r.Q95), num4(r.MCSEMean),
			ess(r.ESSBulk), ess(r.ESSTail), rhat3(r.Rhat))
	}
	return tw.Flush()
}

// num4 prints 4 significant digits, as posterior's print method does.
func num4(x float64) string {
	if math.IsNaN(x) {
		return "NA"
	}
	return fmt.Sprintf("%.4g", x)
}

func ess(x float64) string {
	if math.IsNaN(x) {
		return "NA"
	}
	return fmt.Sprintf("%.0f", x)
}

func rhat3(x float64) string {
	if math.IsNaN(x) {
		return "NA"
	}
	return fmt.Sprintf("%.3f", x)
}

// checkSummaryFinite refuses a summary that overflowed: finite draws give
// an infinite mean, sd, quantile or MCSE (or a NaN mean) only when float64
// arithmetic overflows, and the table would show it as +Inf, JSON as the
// null that otherwise means NA.
func checkSummaryFinite(rows []posterior.CoordSummary) error {
	for _, r := range rows {
		for _, v := range []struct {
			name string
			x    float64
		}{{"mean", r.Mean}, {"sd", r.SD}, {"q5", r.Q5}, {"q95", r.Q95}, {"mcse_mean", r.MCSEMean}} {
			if math.IsInf(v.x, 0) || (v.name == "mean" && math.IsNaN(v.x)) {
				return badInput(fmt.Errorf("%s: %s is %v: the draws are too large in magnitude for float64 arithmetic (|z| near 1e154 or more)", r.Name, v.name, v.x))
			}
		}
	}
	return nil
}
