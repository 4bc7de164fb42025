package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/afin-bench/afin/datasets"
	"github.com/afin-bench/afin/factor"
)

const datasetsUsage = `usage: afin datasets <list|task|fetch> [flags]

  list [--json]                    the 12 UCI tasks (key, name, d, N, prior, likelihood)
  task KEY [--data-dir DIR]        print task KEY as task JSON
  fetch [--data-dir DIR] [flags]   download the raw files again from their sources (the only command that downloads)

The raw files are read from --data-dir, else $AFIN_DATA_DIR, as
<dir>/<key>/<file>, else from the copy built into afin (the repository's
datasets/uci). fetch writes to --data-dir, else $AFIN_DATA_DIR, else the
user cache directory (afin/uci under it); read them with --data-dir.
Run 'afin datasets <subcommand> --help' for its flags.
`

// runDatasets dispatches `afin datasets list|task|fetch`.
func runDatasets(ctx context.Context, env *cliEnv, args []string) error {
	if len(args) == 0 {
		fmt.Fprint(env.stderr, datasetsUsage)
		return badInput(errors.New("missing subcommand (list, task or fetch)"))
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		fmt.Fprint(env.stderr, datasetsUsage)
		return flag.ErrHelp
	case "list":
		return runDatasetsList(env, args[1:])
	case "task":
		return runDatasetsTask(env, args[1:])
	case "fetch":
		return runDatasetsFetch(ctx, env, args[1:])
	}
	fmt.Fprint(env.stderr, datasetsUsage)
	return badInput(fmt.Errorf("unknown subcommand %q (want list, task or fetch)", args[0]))
}

func runDatasetsList(env *cliEnv, args []string) error {
	fs := newFlagSet(env, "datasets list", "[--json]")
	asJSON := fs.Bool("json", false, "print the tasks as a JSON array")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	list := datasets.List()
	if *asJSON {
		return writeJSON(env.stdout, list)
	}
	tw := tabwriter.NewWriter(env.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tNAME\tD\tN\tPRIOR\tLIKELIHOOD")
	for _, in := range list {
		lik := in.Likelihood
		if in.Heterogeneous {
			lik = fmt.Sprintf("%s (%s)", lik, strings.Join(in.Likelihoods, " + "))
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\n", in.Key, in.Name, in.D, in.N, in.Prior, lik)
	}
	return tw.Flush()
}

func runDatasetsTask(env *cliEnv, args []string) error {
	fs := newFlagSet(env, "datasets task", "KEY [--data-dir DIR]")
	dataDir := fs.String("data-dir", "", "directory holding <key>/<file> raw files (default $AFIN_DATA_DIR, else the copy built into afin)")
	key, err := parseWithPositional(fs, args)
	if err != nil {
		return err
	}
	if key == "" {
		return badInput(fmt.Errorf("missing task KEY (one of %s)", strings.Join(datasets.Keys(), ", ")))
	}
	if _, err := datasets.Lookup(key); err != nil {
		return badInput(err)
	}
	dir, source := datasets.DataDir(*dataDir, os.Getenv(datasets.EnvDataDir))
	task, err := datasets.Load(dir, key)
	if err != nil {
		if dir != datasets.BuiltIn {
			err = fmt.Errorf("data directory %s (from %s): %w", dir, source, err)
		}
		if errors.Is(err, datasets.ErrNoData) {
			return badInput(err)
		}
		return err
	}
	data, err := factor.MarshalTask(task)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(env.stdout, "%s\n", data)
	return err
}

func runDatasetsFetch(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "datasets fetch", "[--data-dir DIR] [--only KEY,...] [--mirror URL|DIR] [--timeout D] [--force] [--json]")
	dataDir := fs.String("data-dir", "", "where to put the files (default $AFIN_DATA_DIR, else the user cache)")
	only := fs.String("only", "", "comma-separated task keys to fetch (default: all 12)")
	mirror := fs.String("mirror", "", "fetch <mirror>/<key>/<file> from this URL or local directory instead of the canonical sources")
	timeout := fs.Duration("timeout", datasets.DefaultFetchTimeout, "limit per download")
	force := fs.Bool("force", false, "download again even when a valid file is present")
	asJSON := fs.Bool("json", false, "print what was fetched as JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *timeout <= 0 {
		return badInput(fmt.Errorf("--timeout must be > 0, got %v", *timeout))
	}
	var keys []string
	if *only != "" {
		for _, k := range strings.Split(*only, ",") {
			k = strings.TrimSpace(k)
			if _, err := datasets.Lookup(k); err != nil {
				return badInput(err)
			}
			keys = append(keys, k)
		}
	}
	dir, source, err := datasets.FetchDir(*dataDir, os.Getenv(datasets.EnvDataDir))
	if err != nil {
		return err
	}
	// Before the network: a directory that cannot hold the files.
	if err := checkFetchDir(source, dir); err != nil {
		return err
	}
	fmt.Fprintf(env.stderr, "fetching UCI raw files into %s (from %s)\n", dir, source)
	start := time.Now()
	res, err := datasets.Fetch(ctx, dir, datasets.FetchOptions{
		Keys: keys, Mirror: *mirror, Timeout: *timeout, Force: *force, Log: env.stderr,
	})
	if *asJSON && res != nil {
		if jerr := writeJSON(env.stdout, res); jerr != nil && err == nil {
			err = jerr
		}
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(env.stderr, "done in %.1fs: %d files in %s (afin reads them with --data-dir %s or %s=%s; unset, it reads its built-in copy)\n",
		time.Since(start).Seconds(), len(res), dir, dir, datasets.EnvDataDir, dir)
	return nil
}

// parseWithPositional parses flags placed before or after one positional
// argument (`task KEY --data-dir D` and `task --data-dir D KEY` both work).
func parseWithPositional(fs *flag.FlagSet, args []string) (string, error) {
	if err := parseQuiet(fs, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return "", err
		}
		return "", badInput(err)
	}
	if fs.NArg() == 0 {
		return "", nil
	}
	pos := fs.Arg(0)
	if err := parseFlags(fs, fs.Args()[1:]); err != nil {
		return "", err
	}
	return pos, nil
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
