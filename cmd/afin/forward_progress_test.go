package main

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/afin-bench/afin/factor"
	"github.com/afin-bench/afin/internal/progress"
	"github.com/afin-bench/afin/methods"
)

// TestPassProgressLines: off a terminal a forward pass shorter than
// passBarAfter prints nothing, and a long one a line at most every
// passLineEvery plus one at its end, each saying how far it is; a second
// pass starts its own count.
func TestPassProgressLines(t *testing.T) {
	tests := []struct {
		name   string
		passes []time.Duration // each pass's length, reported every second
		lines  int
	}{
		{"short", []time.Duration{2 * time.Second}, 0},
		{"just under a line", []time.Duration{29 * time.Second}, 0},
		{"long", []time.Duration{100 * time.Second}, 4}, // 30, 60, 90 s and the end
		{"two long", []time.Duration{65 * time.Second, 31 * time.Second}, 3 + 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			clock := time.Unix(0, 0)
			p := newPassProgress(&buf, "afin infer: forward pass")
			p.now = func() time.Time { return clock }
			p.newBar = func(int) *progress.Bar { return nil } // not a terminal
			var stamps []time.Time
			for _, length := range tc.passes {
				total := int64(length / time.Second)
				for done := int64(0); done <= total; done++ {
					before := buf.Len()
					p.report(done, total)
					if buf.Len() > before {
						stamps = append(stamps, clock)
					}
					if done < total {
						clock = clock.Add(time.Second)
					}
				}
			}
			lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
			if buf.Len() == 0 {
				lines = nil
			}
			if len(lines) != tc.lines {
				t.Fatalf("%d lines, want %d:\n%s", len(lines), tc.lines, buf.String())
			}
			for i, l := range lines {
				if !strings.HasPrefix(l, "afin infer: forward pass: ") || !strings.Contains(l, "% (") {
					t.Errorf("line %q", l)
				}
				if i > 0 && stamps[i].Sub(stamps[i-1]) < passLineEvery && !strings.Contains(l, "100%") {
					t.Errorf("line %d %s after the last: more often than every %s", i, stamps[i].Sub(stamps[i-1]), passLineEvery)
				}
			}
		})
	}
}

// TestWarningsSaidOnce: what a method said before it ran is not printed
// again from its answer's flags.
func TestWarningsSaidOnce(t *testing.T) {
	var buf bytes.Buffer
	w := newWarnings(&buf, "infer")
	for _, m := range []string{"outside", "long", "outside", "poor fit"} {
		w.warn(m)
	}
	want := "afin infer: warning: outside\nafin infer: warning: long\nafin infer: warning: poor fit\n"
	if buf.String() != want {
		t.Errorf("printed %q, want %q", buf.String(), want)
	}
}

// TestLargeTaskNote: a task of at least the limit's covariate values gets
// one line with a measured gradient time, and for NUTS the least number
// of gradients its warm-up makes; a smaller one gets none.
func TestLargeTaskNote(t *testing.T) {
	task, err := factor.Simulate(rand.New(rand.NewPCG(1, 2)), factor.SimOptions{D: 3, N: 2000,
		Prior: "diag_gaussian", Likelihoods: []string{"bernoulli_logit"}, Design: factor.DesignIID})
	if err != nil {
		t.Fatal(err)
	}
	opts := methods.DefaultOptions()
	for _, tc := range []struct {
		method string
		limit  int
		want   []string
	}{
		{methods.NUTS, 6001, nil},
		{methods.NUTS, 6000, []string{"large task (N=2000 sites, d=3)", "one log-density gradient takes", "at least 4000 of them"}},
		{"frvi", 6000, []string{"large task"}},
	} {
		got := largeTaskNote(task, tc.method, opts, tc.limit)
		if (got == "") != (tc.want == nil) || strings.Contains(got, "\n") {
			t.Errorf("%s, limit %d: %q", tc.method, tc.limit, got)
		}
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s, limit %d: %q lacks %q", tc.method, tc.limit, got, w)
			}
		}
	}
}

// TestInferSaysOnceAndForecasts: `afin infer` on a task outside the
// checkpoint's support says so once on stderr (before the pass, the
// method's Env.Warn; not again from the answer's flags), and its JSON
// carries the pass's forecast for a program: predicted FLOPs, peak
// memory and seconds, and no long_forward for a short pass.
func TestInferSaysOnceAndForecasts(t *testing.T) {
	dir := t.TempDir()
	code, task, stderr := cliRun(t, "simulate", "--prior", "diag_gaussian", "--likelihood", "bernoulli_logit", "--d", "3", "--n", "300", "--seed", "1")
	if code != 0 {
		t.Fatalf("simulate: exit %d: %s", code, stderr)
	}
	path := filepath.Join(dir, "task.json")
	if err := os.WriteFile(path, []byte(task), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := cliRun(t, "infer", "--method", "afin", "--task", path, "--draws", "10", "--json",
		"--checkpoint", filepath.Join("..", "..", "checkpoints", "small-full"))
	if code != 0 {
		t.Fatalf("infer: exit %d: %s", code, stderr)
	}
	if n := strings.Count(stderr, "outside the checkpoint's training support"); n != 1 || !strings.HasPrefix(stderr, "afin infer: warning: the task is outside") {
		t.Errorf("stderr says the task is outside %d times (want once, first):\n%s", n, stderr)
	}
	var out struct {
		Diagnostics map[string]any `json:"diagnostics"`
	}
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"predicted_flops", "predicted_peak_bytes", "predicted_forward_seconds"} {
		if v, _ := out.Diagnostics[k].(float64); !(v > 0) {
			t.Errorf("diagnostics.%s = %v, want > 0", k, out.Diagnostics[k])
		}
	}
	if _, ok := out.Diagnostics["long_forward"]; ok {
		t.Errorf("a short pass is marked long_forward")
	}
}
