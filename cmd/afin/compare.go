package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/afin-bench/afin/reports"
)

// isCompare reports whether report's arguments ask for a comparison.
func isCompare(args []string) bool {
	return slices.Contains(args, "--compare") || slices.Contains(args, "-compare")
}

// runReportCompare is `afin report --compare A B`: the per-method, per-tier
// differences between two results directories, printed as a table (and
// optionally written as Markdown). Flagged differences are information,
// not failure: it exits 0 (the gate is `afin check`).
func runReportCompare(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "report", "--compare A B [--markdown FILE] [--z Z] [--rel R] [--abs A]")
	fs.Bool("compare", false, "compare two results directories A and B (B − A per method, tier and budget)")
	markdown := fs.String("markdown", "", "also write the comparison as Markdown to this file (- for stdout instead of the terminal table)")
	def := reports.DefaultCompareOptions()
	z := fs.Float64("z", def.Z, "with ≥ 2 seeds on both sides: flag |Δ| > z standard errors of the difference")
	rel := fs.Float64("rel", def.Relative, "with one seed: flag |Δ| > rel·|A| + abs")
	abs := fs.Float64("abs", def.Absolute, "absolute floor under both thresholds")
	dirs, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if len(dirs) != 2 {
		return badInput(fmt.Errorf("--compare needs two results directories A B, got %d", len(dirs)))
	}
	if !(*z > 0) || !(*rel >= 0) || !(*abs >= 0) {
		return badInput(errors.New("--z must be > 0, --rel and --abs ≥ 0"))
	}
	if err := checkOutputFile("--markdown", *markdown); err != nil {
		return err
	}
	a, _, err := loadResults(env, dirs[0])
	if err != nil {
		return err
	}
	b, _, err := loadResults(env, dirs[1])
	if err != nil {
		return err
	}
	for _, side := range []struct {
		dir string
		n   int
	}{{dirs[0], len(a)}, {dirs[1], len(b)}} {
		if side.n == 0 {
			return badInput(noRecordsError("--compare", side.dir, ""))
		}
	}
	cmp := reports.CompareRecords(a, b, dirs[0], dirs[1], reports.CompareOptions{Z: *z, Relative: *rel, Absolute: *abs})
	return writeComparison(env, cmp, *markdown)
}

// parseInterleaved parses flags and positional arguments in any order
// (the flag package stops at the first positional one), returning the
// positional ones.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := parseQuiet(fs, args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, badInput(err)
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// writeComparison prints the comparison and its one-line verdict, and
// writes the Markdown when asked ("-": Markdown on stdout instead).
func writeComparison(env *cliEnv, cmp *reports.Comparison, markdown string) error {
	md, err := cmp.Table.Markdown()
	if err != nil {
		return err
	}
	switch markdown {
	case "-":
		fmt.Fprint(env.stdout, md)
	default:
		if err := cmp.Table.WriteTerminal(env.stdout); err != nil {
			return err
		}
		fmt.Fprintln(env.stdout, cmp.Table.Caption)
		if markdown != "" {
			if err := os.WriteFile(markdown, []byte(md), 0o644); err != nil {
				return fmt.Errorf("writing --markdown: %w", err)
			}
		}
	}
	fmt.Fprintln(env.stdout, comparisonVerdict(cmp))
	return nil
}

// comparisonVerdict is the comparison in one line.
func comparisonVerdict(c *reports.Comparison) string {
	parts := []string{fmt.Sprintf("%d worse and %d better beyond noise", c.Worse, c.Better)}
	if c.OnlyA+c.OnlyB > 0 {
		parts = append(parts, fmt.Sprintf("%d cells only in A, %d only in B", c.OnlyA, c.OnlyB))
	}
	return "comparison: " + strings.Join(parts, "; ")
}
