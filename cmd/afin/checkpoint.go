package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/afin-bench/afin/afin"
	"github.com/afin-bench/afin/afin/checkpoint"
	"github.com/afin-bench/afin/afin/torchimport"
	"github.com/afin-bench/afin/internal/fetch"
)

// checkpointCommands are the subcommands of `afin checkpoint`.
var checkpointCommands = []struct {
	name, summary string
	run           func(ctx context.Context, env *cliEnv, args []string) error
}{
	{"import", "RUN_DIR --out DIR: the authors' PyTorch run (config.json + final.pt) as a portable checkpoint", runCheckpointImport},
	{"convert", "OLD_DIR --out DIR: an old-format checkpoint (checkpoint.gob) as a portable checkpoint", runCheckpointConvert},
	{"info", "DIR [--json]: configuration, parameter count, decoder, training support and hash", runCheckpointInfo},
	{"support", "DIR [--write] [--ranges-only] [--fit N --calibrate N --test N]: training ranges from the simulator configuration and OOD statistics of the pooled summary", runCheckpointSupport},
	{"eval", "DIR [--grid full|small]: held-out conjugate check (M1 relative to the prior mean, AFIN and AFIN+SNIS)", runCheckpointEval},
	{"engines", "DIR: the GoMLX graph (GOMLX_BACKEND, e.g. XLA on a GPU) against the native CPU path on the same weights", runCheckpointEngines},
	{"throughput", "DIR | --config C --random-weights SEED [--tasks K --d D --n N --batch B]: forward passes per second on the chosen engine", runCheckpointThroughput},
	{"fetch", "[--out DIR]: download and import the paper's published checkpoints", runCheckpointFetch},
}

func runCheckpoint(ctx context.Context, env *cliEnv, args []string) error {
	if len(args) == 0 || args[0] == "--help" || args[0] == "-h" || args[0] == "help" {
		fmt.Fprintln(env.stderr, "usage: afin checkpoint <import|convert|info|support|eval|engines|throughput|fetch> ...\n\nsubcommands:")
		for _, c := range checkpointCommands {
			fmt.Fprintf(env.stderr, "  %-10s %s\n", c.name, c.summary)
		}
		if len(args) == 0 {
			return badInput(errors.New("missing subcommand"))
		}
		return nil
	}
	for _, c := range checkpointCommands {
		if c.name == args[0] {
			return c.run(ctx, env, args[1:])
		}
	}
	return badInput(fmt.Errorf("unknown subcommand %q (valid: import, convert, info, support, eval, engines, throughput, fetch)", args[0]))
}

// parseCheckpointArgs parses flags around one positional directory
// argument, which may come before or after the flags.
func parseCheckpointArgs(fs *flag.FlagSet, args []string, what string) (string, error) {
	dir, err := parseOptionalDir(fs, args)
	if err == nil && dir == "" {
		return "", badInput(fmt.Errorf("missing %s", what))
	}
	return dir, err
}

// parseOptionalDir is parseCheckpointArgs for a directory that may be
// left out ("" then).
func parseOptionalDir(fs *flag.FlagSet, args []string) (string, error) {
	var dir string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		dir, args = args[0], args[1:]
	}
	if err := parseQuiet(fs, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return "", err
		}
		return "", badInput(err)
	}
	switch {
	case dir == "" && fs.NArg() == 1:
		dir = fs.Arg(0)
	case fs.NArg() > 0:
		return "", badInput(fmt.Errorf("unexpected argument %q", fs.Arg(fs.NArg()-1)))
	}
	return dir, nil
}

func runCheckpointImport(_ context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "checkpoint import", "RUN_DIR --out DIR")
	out := fs.String("out", "", "new checkpoint directory (must not exist)")
	runDir, err := parseCheckpointArgs(fs, args, "RUN_DIR (a directory with config.json and final.pt)")
	if err != nil {
		return err
	}
	if err := checkNewCheckpointDir(*out); err != nil {
		return err
	}
	notes, err := afin.ImportRun(runDir, *out)
	var te *torchimport.Error
	if errors.As(err, &te) {
		return badInput(te)
	}
	if err != nil {
		return err
	}
	for _, n := range notes {
		fmt.Fprintf(env.stderr, "afin checkpoint import: %s\n", n)
	}
	fmt.Fprintf(env.stdout, "imported %s into %s\n", runDir, *out)
	return nil
}

func runCheckpointConvert(_ context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "checkpoint convert", "OLD_DIR --out DIR")
	out := fs.String("out", "", "new checkpoint directory (must not exist)")
	old, err := parseCheckpointArgs(fs, args, "OLD_DIR (a directory with checkpoint.gob)")
	if err != nil {
		return err
	}
	if err := checkNewCheckpointDir(*out); err != nil {
		return err
	}
	if err := afin.ConvertLegacy(old, *out); err != nil {
		return badInput(err)
	}
	fmt.Fprintf(env.stdout, "converted %s into %s\n", old, *out)
	return nil
}

func runCheckpointInfo(_ context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "checkpoint info", "DIR [--json]")
	asJSON := fs.Bool("json", false, "print JSON")
	dir, err := parseCheckpointArgs(fs, args, "DIR")
	if err != nil {
		return err
	}
	// The weights are read too: a checkpoint whose weight files are
	// truncated, missing or changed is refused here, not described as
	// usable (what infer and density would then fail to load).
	m, _, err := checkpoint.ReadInference(dir)
	if err != nil {
		return badInput(err)
	}
	hash, err := checkpoint.Hash(dir)
	if err != nil {
		return badInput(fmt.Errorf("%s: %w", dir, err))
	}
	ood, oodErr := checkpoint.ReadOOD(dir, m.WeightsSHA256)
	if oodErr != nil && !errors.Is(oodErr, checkpoint.ErrOODStale) {
		return badInput(oodErr)
	}
	_, statErr := os.Stat(filepath.Join(dir, checkpoint.StateFile))
	info := map[string]any{"dir": dir, "hash": hash, "config": m.Config, "decoder": m.Config.Decoder,
		"trainable_params": m.Params, "training_support": m.Support, "step": m.Step, "weights": m.Weights,
		"source": m.Source, "notes": m.Notes, "resumable": statErr == nil}
	if ood != nil {
		// The summary statistics themselves are long and for programs: the
		// file holds them.
		info["ood"] = map[string]any{"file": checkpoint.OODFile, "dim": ood.Dim, "quantile": ood.Quantile, "threshold": ood.Threshold,
			"fit_tasks": ood.FitTasks, "calibration_tasks": ood.CalibrationTasks, "test_tasks": ood.TestTasks, "false_flag_rate": ood.FalseFlagRate}
	}
	if *asJSON {
		return writeJSON(env.stdout, info)
	}
	var b strings.Builder
	printCheckpointInfo(&b, m, hash, statErr == nil)
	b.WriteString(afin.DescribeRanges(m.Support.Ranges))
	switch {
	case ood != nil:
		fmt.Fprintf(&b, "ood          Mahalanobis distance of the %d-number pooled summary, flagged above %.4g (the %g quantile of %d simulated tasks; fitted on %d); false-flag rate %.2f%% on %d fresh simulated tasks\n",
			ood.Dim, ood.Threshold, ood.Quantile, ood.CalibrationTasks, ood.FitTasks, 100*ood.FalseFlagRate, ood.TestTasks)
	case oodErr != nil:
		fmt.Fprintf(&b, "ood          none usable: %v\n", oodErr)
	default:
		fmt.Fprintf(&b, "ood          none (`afin checkpoint support --write %s` computes it)\n", dir)
	}
	if _, err := io.WriteString(env.stdout, b.String()); err != nil {
		return fmt.Errorf("writing the checkpoint description: %w", err)
	}
	return nil
}

func printCheckpointInfo(w io.Writer, m checkpoint.Manifest, hash string, resumable bool) {
	c, s := m.Config, m.Support
	fmt.Fprintf(w, "config       %s, %s decoder, %d trainable parameters\n", c.Name, c.Decoder, m.Params)
	fmt.Fprintf(w, "widths       C=%d; adapters H=%d L=%d; encoder %d BoxMLP layers H=%d L=%d; merge %d blocks of %d heads, maps H=%d L=%d\n",
		c.C, c.AdapterH, c.AdapterL, c.EncLayers, c.BoxH, c.BoxL, c.Blocks, c.Heads, c.MergeH, c.MergeL)
	if c.Decoder == "flow" {
		fmt.Fprintf(w, "decoder      flow: context G=%d, %d couplings, MLPs H=%d L=%d\n", c.FlowG, c.FlowSteps, c.FlowH, c.FlowL)
	} else {
		fmt.Fprintf(w, "decoder      gaussian: MLPs H=%d L=%d, off-diagonal scale %g\n", c.DecH, c.DecL, c.OffdiagMul)
	}
	fmt.Fprintf(w, "support      d ∈ [%d, %d], N ∈ [%d, %d]; priors %s; likelihoods %s; designs %s\n",
		s.DMin, s.DMax, s.NMin, s.NMax, strings.Join(s.Priors, ", "), strings.Join(s.Likelihoods, ", "), strings.Join(s.Designs, ", "))
	fmt.Fprintf(w, "step         %d (%s weights)%s\n", m.Step, m.Weights, map[bool]string{true: ", resumable", false: ""}[resumable])
	fmt.Fprintf(w, "source       %s\n", m.Source)
	for _, n := range m.Notes {
		fmt.Fprintf(w, "note         %s\n", n)
	}
	fmt.Fprintf(w, "hash         %s\n", hash)
}

func runCheckpointFetch(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "checkpoint fetch", "[--out DIR] [--family gaussian,flow] [--base URL] [--timeout D]")
	out := fs.String("out", "checkpoints", "directory receiving paper-gaussian/ and paper-flow/")
	family := fs.String("family", "gaussian,flow", "decoder families to fetch")
	base := fs.String("base", afin.PaperWeightsURL, "base URL of the published run folders")
	timeout := fs.Duration("timeout", 15*time.Second, "connection and response-header timeout")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	// Everything the download does not need is checked before it: the
	// families, the output directory, and no checkpoint to overwrite.
	families := strings.Split(*family, ",")
	for _, fam := range families {
		if _, ok := afin.PaperRuns[fam]; !ok {
			return badInput(fmt.Errorf("--family: unknown family %q (gaussian or flow)", fam))
		}
		if dir := filepath.Join(*out, "paper-"+fam); fileExists(dir) {
			return badInput(fmt.Errorf("--out: %s already exists (remove it to fetch again)", dir))
		}
	}
	if err := checkOutputDir("--out", *out); err != nil {
		return err
	}
	client := fetch.NewClient(fetch.Timeouts{Connect: *timeout, Answer: *timeout})
	dirs, err := afin.FetchPaperWeights(ctx, afin.FetchOptions{BaseURL: *base, OutDir: *out,
		Families: families, Client: client})
	for _, d := range dirs {
		fmt.Fprintf(env.stdout, "fetched, imported and verified %s\n", d)
	}
	var te *torchimport.Error
	if errors.As(err, &te) {
		return badInput(te)
	}
	return err
}

// fileExists reports whether path exists (as anything).
func fileExists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// checkNewCheckpointDir refuses a missing or existing --out: import and
// convert write a new checkpoint and never overwrite one.
func checkNewCheckpointDir(out string) error {
	if out == "" {
		return badInput(errors.New("--out is required"))
	}
	if _, err := os.Stat(out); err == nil {
		return badInput(fmt.Errorf("--out %s already exists", out))
	}
	return checkOutputDir("--out", out)
}
