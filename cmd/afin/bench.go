package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/afin-bench/afin/afin"
	"github.com/afin-bench/afin/baselines/vi"
	"github.com/afin-bench/afin/bench"
	"github.com/afin-bench/afin/catalog"
	"github.com/afin-bench/afin/datasets"
	"github.com/afin-bench/afin/methods"
	"github.com/afin-bench/afin/records"
	"github.com/afin-bench/afin/reference"
)

func runBench(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "bench", "--suite S --profile smoke|quick|paper [--results DIR] [--shard I/N] [--seeds ...] [--methods ...]\n       afin bench --estimate [--suite S|all] --profile P [--shards N | --time-limit D] [--json]")
	suite := fs.String("suite", "", "suite: "+strings.Join(bench.SuiteNames(), ", "))
	profile := fs.String("profile", "quick", "profile: "+strings.Join(bench.ProfileNames(), ", "))
	results := fs.String("results", "results", "results directory (JSON lines; shared by shards, resumable)")
	shard := fs.String("shard", "", "run only shard I of N (0 ≤ I < N), e.g. 0/4; $SLURM_ARRAY_TASK_ID or $JOB_COMPLETION_INDEX give I")
	seeds := fs.String("seeds", "", "comma-separated seeds (default: the profile's)")
	methodList := fs.String("methods", "", "comma-separated methods (default: every method of the suite available here)")
	checkpoint := fs.String("checkpoint", "", "AFIN checkpoint directory (default $AFIN_CHECKPOINT or the shipped checkpoints/"+afin.DefaultCheckpointName+")")
	suiteFlags := declareSuiteFlags(fs)
	dataDir := fs.String("data-dir", "", "raw files of the uci suite (default $AFIN_DATA_DIR) or the openml suite (default $AFIN_OPENML_DIR); unset, the copy built into afin")
	methodsFile := fs.String("methods-file", "", "methods file configuring external methods --methods exec:NAME (default $"+methods.MethodsFileEnv+")")
	workers := fs.Int("workers", 1, "tasks run concurrently (1 keeps timings clean)")
	protocol := fs.String("protocol", string(vi.ProtocolPractitioner), "VI protocol of "+strings.Join(catalog.InFamily(catalog.VI), ", ")+": practitioner or paper (the paper's; its units get the variant \"paper\")")
	asJSON := fs.Bool("json", false, "print the run summary as JSON")
	retry := fs.Bool("retry-failed", false, "rerun units the results directory holds as failed (by default a failed unit is finished; a successful rerun supersedes its failed records)")
	allowMixed := fs.Bool("allow-mixed", false, "add to a results directory whose records of the suite carry another commit, build or profile (refused by default, as afin check refuses the mix)")
	est := declareEstimateFlags(fs)
	withBudgetHelp(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if est.on {
		return runEstimate(env, est, *suite, *profile, *protocol, *seeds, *methodList)
	}
	prof, err := benchProfile(*suite, *profile, *protocol)
	if err != nil {
		return err
	}
	si, sn, err := bench.ParseShard(*shard)
	if err != nil {
		return badInput(err)
	}
	seedList, err := benchParseSeeds(*seeds)
	if err != nil {
		return badInput(err)
	}
	if *workers < 1 {
		return badInput(fmt.Errorf("--workers: must be ≥ 1, got %d", *workers))
	}
	if err := checkOutputDir("--results", *results); err != nil {
		return err
	}
	// The reference cache is written during the run: an unwritable one
	// would fail every unit after its reference's NUTS run.
	if dir, err := reference.DefaultCacheDir(os.Getenv(cacheDirEnv)); err == nil {
		if err := checkOutputDir("reference cache ($AFIN_CACHE_DIR)", dir); err != nil {
			return err
		}
	}
	// A suite that names an environment variable for its raw files
	// (package suite) reads it here, the one place the environment is read.
	if env := bench.DataDirEnv(*suite); env != "" && *dataDir == "" {
		*dataDir = os.Getenv(env)
	}
	cfg := bench.Config{
		Suite: *suite, Profile: prof, Results: *results,
		Shard: si, Shards: sn, Seeds: seedList, Methods: benchSplitList(*methodList),
		Env: &methods.Env{Checkpoint: checkpointOr(*checkpoint), MethodsFile: flagOrEnv(*methodsFile, methods.MethodsFileEnv), Engine: engineChoice(), CacheDir: os.Getenv(cacheDirEnv),
			Warn: newWarnings(env.stderr, "bench").warn},
		RefCacheDir: os.Getenv(cacheDirEnv),
		DataDir:     *dataDir, DataDirEnv: os.Getenv(datasets.EnvDataDir), Workers: *workers, RetryFailed: *retry,
		AllowMixed: *allowMixed, SuiteFlags: suiteFlags,
		Progress: env.stderr, Log: env.stderr,
	}
	if usesNetwork(cfg.Methods) {
		env.noteKernel()
	}
	sum, runErr := bench.Run(ctx, cfg)
	if sum != nil {
		if err := printBenchSummary(env, *asJSON, *suite, *profile, sum); err != nil {
			return err
		}
		noteResults(env, *results)
	}
	return benchError(sum, runErr)
}

// benchProfile checks --suite and returns the --profile with the
// --protocol it runs VI under.
func benchProfile(suite, profile, protocol string) (*bench.Profile, error) {
	if suite == "" {
		return nil, badInput(fmt.Errorf("--suite is required (one of %s)", strings.Join(bench.SuiteNames(), ", ")))
	}
	if !benchContains(bench.SuiteNames(), suite) {
		return nil, badInput(fmt.Errorf("--suite: unknown suite %q (valid: %s)", suite, strings.Join(bench.SuiteNames(), ", ")))
	}
	prof, err := bench.GetProfile(profile)
	if err != nil {
		return nil, badInput(fmt.Errorf("--profile: %w", err))
	}
	if prof.VIProtocol, err = vi.ParseProtocol(protocol); err != nil {
		return nil, badInput(fmt.Errorf("--protocol: %w", err))
	}
	return prof, nil
}

// noteResults says on stderr, with file:line, which metrics of the
// results directory are beyond records.MetricBound, as soon as a run has
// written them (report leaves them out and check refuses them), and how
// much of its plan the directory holds when that is not all of it (other
// shards still to run, or an interrupted run): the rules report and check
// apply, from the records layer.
func noteResults(env *cliEnv, dir string) {
	l, err := records.Load(dir)
	if err != nil {
		return // the run's own error, or the next report, says why
	}
	for _, b := range records.Implausible(l.Records, l.Where) {
		fmt.Fprintf(env.stderr, "warning: %s: report will leave it out and check refuse it\n", b)
	}
	for _, n := range l.Incomplete() {
		fmt.Fprintln(env.stderr, "note: results", n)
	}
}

// benchError maps a run's error to the exit status: bad input (2) for what
// refused the run before any work, methodError's mapping otherwise.
func benchError(sum *bench.Summary, runErr error) error {
	// Refused before any work (no summary): results that are not records,
	// missing UCI or OpenML raw files, a bad OpenML file. (A unit failing
	// on a raw file removed during the run is a failure of the run.)
	refused := sum == nil && (errors.Is(runErr, bench.ErrTooManyShards) || errors.Is(runErr, records.ErrInvalidRecord) || errors.Is(runErr, datasets.ErrNoData) || errors.Is(runErr, datasets.ErrBadData) ||
		errors.Is(runErr, records.ErrConflict) || errors.Is(runErr, records.ErrMixedCommits) || errors.Is(runErr, records.ErrMixedProfiles))
	if refused || errors.Is(runErr, bench.ErrNotInSuite) || errors.Is(runErr, bench.ErrDecoderCheckpoint) || errors.Is(runErr, records.ErrLocked) || errors.Is(runErr, bench.ErrSuiteFlag) {
		return badInput(runErr)
	}
	return methodError(runErr)
}

// declareSuiteFlags declares every suite's own flags (bench.SuiteFlags)
// on fs, each once with the suites that take it in its help; the values
// given land in the returned map, which the run checks against its suite.
func declareSuiteFlags(fs *flag.FlagSet) map[string]string {
	vals := map[string]string{}
	usage := map[string][]string{}
	var order []string
	for _, f := range bench.SuiteFlags() {
		if _, ok := usage[f.Name]; !ok {
			order = append(order, f.Name)
		}
		usage[f.Name] = append(usage[f.Name], f.Usage)
	}
	for _, name := range order {
		fs.Func(name, strings.Join(usage[name], "; "), func(v string) error {
			vals[name] = v
			return nil
		})
	}
	return vals
}

// usesNetwork reports whether a bench with these --methods (none: the
// suite's, AFIN among them) runs the AFIN network.
func usesNetwork(list []string) bool {
	for _, m := range list {
		if d, _ := methods.Lookup(m); d.Network {
			return true
		}
	}
	return len(list) == 0
}

func benchSplitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func benchParseSeeds(s string) ([]uint64, error) {
	var out []uint64
	for _, f := range benchSplitList(s) {
		v, err := strconv.ParseUint(f, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("--seeds: %q is not a non-negative integer", f)
		}
		// A repeated seed would run each of its units twice (the second
		// run's records are dropped as duplicates): twice the time for
		// nothing.
		if slices.Contains(out, v) {
			return nil, fmt.Errorf("--seeds: seed %d is given twice", v)
		}
		out = append(out, v)
	}
	return out, nil
}

func benchContains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// printBenchSummary reports what a run did, as JSON with --json.
func printBenchSummary(env *cliEnv, asJSON bool, suite, profile string, sum *bench.Summary) error {
	if asJSON {
		out := map[string]any{
			"suite": suite, "profile": profile, "file": sum.File, "units": sum.Units,
			"skipped": sum.Skipped, "ran": sum.Ran, "failed": sum.Failed, "previously_failed": sum.PrevFailed,
			"records": sum.Records, "seconds": sum.Duration.Seconds(), "notes": sum.Notes,
		}
		return json.NewEncoder(env.stdout).Encode(out)
	}
	_, err := fmt.Fprintf(env.stdout, "suite %s, profile %s: %d units (%d already done, %d of them failed earlier; %d run, %d failed), %d records appended to %s in %.1fs\n",
		suite, profile, sum.Units, sum.Skipped, sum.PrevFailed, sum.Ran, sum.Failed, sum.Records, sum.File, sum.Duration.Seconds())
	return err
}
