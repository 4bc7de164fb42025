// Command afin is the single binary of the afin benchmark harness for
// amortized Bayesian posterior inference: it simulates tasks, runs the
// AFIN network and the baselines on them, computes posterior metrics,
// trains the network and runs the benchmark suites. Run `afin help` for
// the list of subcommands; each takes --help.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/afin-bench/afin/afin"
	"github.com/afin-bench/afin/internal/gemm"
)

// command is one `afin` subcommand. run gets the arguments after the
// subcommand's name.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, env *cliEnv, args []string) error
}

// cliEnv carries the process's streams, so the commands can be driven
// in-process by tests.
type cliEnv struct {
	stdout, stderr io.Writer
	kernelNoted    bool // the generic-kernel note was printed (noteKernel)
}

func commands() []command {
	return []command{
		{"simulate", "draw one task from the paper's simulator", runSimulate},
		{"infer", "run one inference method on one task", runInfer},
		{"metrics", "M1, M2 and SW2 between two draw files", runMetrics},
		{"reference", "long-run NUTS reference posterior, cached by task content", runReference},
		{"train", "train the AFIN network on simulated tasks", runTrain},
		{"bench", "run a benchmark suite (resumable, shardable)", runBench},
		{"report", "HTML report and paper tables from a results directory", runReport},
		{"check", "fail when results regress beyond tolerance (CI accuracy gate)", runCheck},
		{"datasets", "the 12 UCI tasks: list, task, fetch", runDatasets},
		{"checkpoint", "AFIN checkpoints: import the authors' PyTorch runs, convert, info, fetch", runCheckpoint},
		{"density", "log q(z) of the AFIN posterior at given points", runDensity},
		{"summary", "per-coordinate mean, sd, quantiles, MCSE, bulk/tail ESS, R̂ of a draw file", runSummary},
		{"version", "the build, and the engine and matrix kernel the network runs on here", runVersion},
	}
}

// exitError carries a process exit status. Bad input (task validation,
// unknown flags) exits 2; other failures exit 1.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// badInput marks err as a user-input error: exit status 2.
func badInput(err error) error { return &exitError{code: 2, err: err} }

func main() {
	// GoMLX would otherwise try to download an XLA plugin, which fails
	// offline; the pure Go backend is always available.
	if os.Getenv("GOMLX_BACKEND") == "" {
		os.Setenv("GOMLX_BACKEND", "go")
	}
	if !lowPrecisionTraining(os.Args[1:]) {
		for k, v := range fullFloat32OnCUDA(os.Getenv("GOMLX_BACKEND"), os.Getenv) {
			os.Setenv(k, v)
		}
	}
	if err := useGemmKernel(os.Getenv(gemmKernelEnv)); err != nil {
		fmt.Fprintf(os.Stderr, "afin: %v\n", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	os.Exit(runUntilSignal(ctx, stop, os.Args[1:]))
}

// fullFloat32OnCUDA returns the environment that keeps XLA on an NVIDIA
// GPU in float32, for a backend naming a CUDA plugin, leaving alone any
// variable the user set. By default cuBLAS and XLA's Triton GEMM fusions
// multiply float32 matrices in TF32 (10 mantissa bits): on an H100 the
// posterior means then differed from the native engine's by 9.9e-3
// relative (`afin checkpoint engines`, 64 tasks), and by 2.8e-6 with
// both switched off. The process's C environment is what cuBLAS and XLA
// read, and cgo's os.Setenv writes it. go-xla (from v0.4) also asks for
// TF32 products on CUDA unless its backend option says tf32=false.
func fullFloat32OnCUDA(backend string, getenv func(string) string) map[string]string {
	if !strings.HasPrefix(backend, "xla") || !strings.Contains(strings.ToLower(backend), "cuda") {
		return nil
	}
	env := map[string]string{}
	if !strings.Contains(backend, "tf32") {
		env[backendEnv] = backend + ",tf32=false"
	}
	if getenv("NVIDIA_TF32_OVERRIDE") == "" {
		env["NVIDIA_TF32_OVERRIDE"] = "0"
	}
	if flags := getenv("XLA_FLAGS"); !strings.Contains(flags, "xla_gpu_enable_triton_gemm") {
		env["XLA_FLAGS"] = strings.TrimSpace(flags + " --xla_gpu_enable_triton_gemm=false")
	}
	return env
}

// gemmKernelEnv forces the matrix kernel of the CPU engine
// (internal/gemm): avx512, avx2, neon or generic. Unset, the engine uses
// the fastest this CPU supports; set, a kernel the CPU lacks is refused
// rather than silently replaced.
const gemmKernelEnv = "AFIN_GEMM"

// useGemmKernel applies AFIN_GEMM's value v (empty: keep the default).
func useGemmKernel(v string) error {
	if v == "" {
		return nil
	}
	if err := gemm.Use(v); err != nil {
		return fmt.Errorf("%s=%s: %w", gemmKernelEnv, v, err)
	}
	return nil
}

// runUntilSignal runs the command and returns its exit status. Ctrl-C
// or SIGTERM cancels the command's context, which every long loop looks
// at within a bounded amount of work, so the command itself returns
// promptly (130, or its own status when it had finished) after cleaning
// up: locks released, train's checkpoint saved. A second signal kills at
// once. Results are safe either way: a record is one write, and a torn
// one is repaired on resume.
func runUntilSignal(ctx context.Context, stop func(), args []string) int {
	done := make(chan int, 1)
	go func() { done <- run(ctx, &cliEnv{stdout: os.Stdout, stderr: os.Stderr}, args) }()
	select {
	case code := <-done:
		stop()
		return code
	case <-ctx.Done():
	}
	stop() // a second signal now kills at once
	if len(args) > 0 && args[0] == "train" {
		fmt.Fprintln(os.Stderr, "afin train: interrupted, saving the checkpoint (interrupt again to abort without saving)")
	}
	return <-done
}

// run executes one afin invocation and returns its exit status.
func run(ctx context.Context, env *cliEnv, args []string) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(env.stderr)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	for _, c := range commands() {
		if c.name != args[0] {
			continue
		}
		err := c.run(ctx, env, args[1:])
		if err == nil || errors.Is(err, flag.ErrHelp) {
			return 0
		}
		if ctx.Err() != nil && errors.Is(err, context.Canceled) {
			// Ctrl-C or SIGTERM: the conventional status, no error text.
			hint := ""
			if c.name == "bench" {
				hint = "; rerun the same command to resume"
			}
			fmt.Fprintf(env.stderr, "afin %s: interrupted%s\n", c.name, hint)
			return 130
		}
		fmt.Fprintf(env.stderr, "afin %s: %v\n", c.name, err)
		var ee *exitError
		if errors.As(err, &ee) {
			return ee.code
		}
		if errors.Is(err, afin.ErrTooLarge) {
			// Whichever command met it, a task beyond the memory
			// available is bad input, refused before any work.
			return 2
		}
		return 1
	}
	fmt.Fprintf(env.stderr, "afin: unknown command %q\n", args[0])
	usage(env.stderr)
	return 2
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: afin <command> [flags]\n\ncommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun 'afin <command> --help' for a command's flags.")
}

// newFlagSet returns a flag set that reports errors instead of exiting, and
// writes its usage to the environment's stderr.
func newFlagSet(env *cliEnv, name, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet("afin "+name, flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: afin %s %s\n\nflags:\n", name, synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses args, turning flag errors into exit status 2 and
// rejecting stray positional arguments.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := parseQuiet(fs, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return badInput(err)
	}
	if fs.NArg() > 0 {
		return badInput(fmt.Errorf("unexpected argument %q", fs.Arg(0)))
	}
	return nil
}

// parseQuiet is fs.Parse without the flag package's own report of a bad
// flag (the error followed by the whole usage): run prints the error as
// the one line a bad input gets. --help still prints the usage.
func parseQuiet(fs *flag.FlagSet, args []string) error {
	out := fs.Output()
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	fs.SetOutput(out)
	if errors.Is(err, flag.ErrHelp) {
		fs.Usage()
	}
	return err
}
