package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/afin-bench/afin/afin"
	"github.com/afin-bench/afin/afin/cpu"
	"github.com/afin-bench/afin/factor"
)

// rssChildEnv names the task file a re-executed test binary runs `afin
// infer --method afin` on before printing its peak resident memory.
const rssChildEnv = "AFIN_TEST_RSS_TASK"

// childArgsEnv holds, tab-separated, the arguments of an afin command a
// re-executed test binary runs under a 4 GiB address-space limit, exiting
// with its status: a command that might allocate without bound cannot
// take a shared machine's memory down with the test.
const childArgsEnv = "AFIN_TEST_CHILD_ARGS"

// TestMain runs the children: TestPeakRSSWithinEstimate measures each
// size in a fresh process (the peak RSS of a process is a high-water
// mark, so sizes cannot share one), and childArgsEnv commands run
// confined.
func TestMain(m *testing.M) {
	if args := os.Getenv(childArgsEnv); args != "" {
		if err := limitAddressSpace(4 << 30); err != nil {
			fmt.Fprintln(os.Stderr, "setrlimit:", err)
			os.Exit(100)
		}
		os.Exit(run(context.Background(), &cliEnv{stdout: os.Stdout, stderr: os.Stderr}, strings.Split(args, "\t")))
	}
	if task := os.Getenv(rssChildEnv); task != "" {
		code := run(context.Background(), &cliEnv{stdout: io.Discard, stderr: os.Stderr},
			[]string{"infer", "--method", "afin", "--task", task, "--draws", "10", "--json"})
		hwm, err := peakRSS()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Printf("exit=%d peak_rss=%d\n", code, hwm)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// peakRSS is the process's VmHWM (bytes).
func peakRSS() (int64, error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb * 1024, err
		}
	}
	return 0, fmt.Errorf("no VmHWM in /proc/self/status")
}

// TestPeakRSSWithinEstimate runs `afin infer --method afin` (the shipped
// checkpoint, native engine) on a grid of task sizes, each in its own
// process, and requires the process's peak RSS to stay within
// cpu.PredictPeakBytes, the number the memory check refuses tasks by.
// The grid spans about 0.1 to 2 GB of peak.
func TestPeakRSSWithinEstimate(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("not Linux: reads /proc/self/status")
	}
	if testing.Short() {
		t.Skip("-short: runs afin on tasks of up to 2 GB peak")
	}
	dir, err := afin.DefaultCheckpointDir("")
	if err != nil {
		t.Fatal(err)
	}
	cfg, _, _, err := afin.CheckpointInfo(dir)
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(4, 27))
	for _, sz := range []struct{ d, n int }{{8, 2048}, {64, 64}, {150, 16}, {250, 16}, {300, 16}, {400, 16}} {
		task, err := factor.Simulate(rng, factor.SimOptions{D: sz.d, N: sz.n, Prior: factor.DiagGaussianFamily,
			Likelihoods: []string{factor.LinGaussianFamily}, Design: factor.DesignIID})
		if err != nil {
			t.Fatal(err)
		}
		data, err := factor.MarshalTask(task)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "task.json")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(exe, "-test.run=^$")
		cmd.Env = append(os.Environ(), rssChildEnv+"="+path, engineEnv+"=native", "AFIN_CHECKPOINT="+dir)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("d=%d N=%d: child: %v\n%s", sz.d, sz.n, err, stderr.Bytes())
		}
		var code int
		var peak int64
		if _, err := fmt.Sscanf(strings.TrimSpace(string(out)), "exit=%d peak_rss=%d", &code, &peak); err != nil || code != 0 {
			t.Fatalf("d=%d N=%d: child printed %q (%v), stderr %s", sz.d, sz.n, out, err, stderr.Bytes())
		}
		est := cpu.PredictPeakBytes(cfg, sz.d, sz.n)
		t.Logf("d=%d N=%d: peak RSS %.1f MB, estimate %.1f MB (%.2f of it)", sz.d, sz.n, float64(peak)/1e6, float64(est)/1e6, float64(peak)/float64(est))
		if peak > est {
			t.Errorf("d=%d N=%d: peak RSS %d bytes exceeds the estimate %d (%.2f×)", sz.d, sz.n, peak, est, float64(peak)/float64(est))
		}
	}
}

// TestDensityRefusesOversizedTask: `afin density` on a task whose forward
// pass needs terabytes exits 2 with one line naming both sizes, as infer
// does, instead of dying in the allocator with a stack trace. It runs in
// a child process under an address-space limit, so a build without the
// check fails the test without taking the machine's memory.
func TestDensityRefusesOversizedTask(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("not Linux: the child's address-space limit is set with setrlimit")
	}
	const d, n = 4096, 256
	var b strings.Builder
	zeros := strings.TrimSuffix(strings.Repeat("0,", d), ",")
	ones := strings.TrimSuffix(strings.Repeat("1,", d), ",")
	fmt.Fprintf(&b, `{"d":%d,"prior":{"type":"diag_gaussian","loc":[%s],"scale":[%s]},"factors":[`, d, zeros, ones)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"type":"gaussian","y":[%s],"sigma":1}`, zeros)
	}
	b.WriteString("]}")
	dir := t.TempDir()
	task := filepath.Join(dir, "task.json")
	at := filepath.Join(dir, "z.csv")
	var hdr []string
	for i := range d {
		hdr = append(hdr, "z"+strconv.Itoa(i+1))
	}
	if err := os.WriteFile(task, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(at, []byte(strings.Join(hdr, ",")+"\n"+zeros+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ckpt, err := afin.DefaultCheckpointDir("")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), childArgsEnv+"="+strings.Join([]string{"density", "--task", task, "--at", at, "--checkpoint", ckpt}, "\t"),
		engineEnv+"=native")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	code := cmd.ProcessState.ExitCode()
	msg := strings.TrimSpace(stderr.String())
	if code != 2 || strings.Count(msg, "\n") != 0 || !strings.HasPrefix(msg, "afin density: ") ||
		!strings.Contains(msg, fmt.Sprintf("d=%d, N=%d needs about", d, n)) || !strings.Contains(msg, "available") {
		t.Fatalf("exit %d (%v), stderr (%d lines, first 300 bytes) %.300q; want exit 2 and one line naming d=%d, N=%d and both sizes",
			code, err, strings.Count(msg, "\n")+1, msg, d, n)
	}
	if stdout.Len() != 0 {
		t.Errorf("refused run printed %q", stdout.String())
	}
	t.Log(msg)
}
