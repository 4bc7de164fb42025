package methods

import (
	"context"
	"errors"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/afin-bench/afin/afin"
	"github.com/afin-bench/afin/factor"
)

// TestAFINWarnsBeforeForward: every AFIN method says, through Env.Warn
// and before its forward pass starts (the pass's first progress report),
// that a task lies outside the checkpoint's support or that its pass is
// predicted to be long; the point's diagnostics carry the forecast for a
// program. The long task's pass is cancelled at its first report: the
// warning had to come before it. (The warning used to be printed only
// from the answer's flags, after the pass.)
func TestAFINWarnsBeforeForward(t *testing.T) {
	ck := filepath.Join("..", "checkpoints", "small-full")
	tests := []struct {
		name, method string
		n            int
		want         []string // in the warnings, in order
		long         bool
	}{
		{"inside", AFIN, 40, nil, false},
		{"outside, afin", AFIN, 300, []string{"outside the checkpoint's training support (N=300"}, false},
		{"outside, afin-snis", AFINSNIS, 300, []string{"outside the checkpoint's training support (N=300"}, false},
		{"long", AFIN, 80000, []string{"outside the checkpoint's training support", "predicted to take about"}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			task, err := factor.Simulate(rand.New(rand.NewPCG(5, 6)), factor.SimOptions{D: 3, N: tc.n,
				Prior: "diag_gaussian", Likelihoods: []string{"bernoulli_logit"}, Design: factor.DesignIID})
			if err != nil {
				t.Fatal(err)
			}
			var (
				mu     sync.Mutex
				events []string
			)
			note := func(s string) {
				mu.Lock()
				events = append(events, s)
				mu.Unlock()
			}
			m, err := New(tc.method, &Env{Checkpoint: ck, Warn: func(s string) { note("warn: " + s) }})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			ctx = afin.WithForwardProgress(ctx, func(done, total int64) {
				if done == 0 {
					note("forward")
					if tc.long {
						cancel()
					}
				}
			})
			job := &Job{Task: task, Seed: 1, Ladder: []int{100}, SkipProposal: true}
			var pts []Point
			err = Run(ctx, m, job, func(p Point) error { pts = append(pts, p); return nil })
			if tc.long != errors.Is(err, context.Canceled) {
				t.Fatalf("Run: %v", err)
			}
			forward := len(events)
			for i, e := range events {
				if e == "forward" {
					forward = i
					break
				}
			}
			if forward == len(events) {
				t.Fatalf("no forward pass reported: %q", events)
			}
			if forward != len(tc.want) {
				t.Fatalf("events %q: want %d warnings before the forward pass", events, len(tc.want))
			}
			for i, w := range tc.want {
				if !strings.Contains(events[i], w) {
					t.Errorf("event %d = %q, want it to say %q", i, events[i], w)
				}
			}
			for _, e := range events[forward:] {
				if strings.HasPrefix(e, "warn: ") {
					t.Errorf("warning %q after the forward pass started", e)
				}
			}
			if tc.long {
				return
			}
			if len(pts) == 0 {
				t.Fatal("no point")
			}
			dg := pts[len(pts)-1].Diagnostics.AFINDiagnostics
			if dg == nil || dg.PredictedFLOPs <= 0 || dg.PredictedPeakBytes <= 0 || !(float64(dg.PredictedForwardSeconds) > 0) || dg.LongForward {
				t.Errorf("diagnostics %+v: want the forecast, not long", dg)
			}
		})
	}
}

// TestLongForwardFlag: the diagnostics of a pass forecast as long carry
// long_forward for a program, beside the predicted seconds.
func TestLongForwardFlag(t *testing.T) {
	m, err := afin.Load(filepath.Join("..", "checkpoints", "small-full"), afin.EngineChoice{})
	if err != nil {
		t.Fatal(err)
	}
	n := &network{model: m}
	for _, tc := range []struct {
		sites int
		long  bool
	}{{1000, false}, {1_000_000, true}} {
		fc := m.Forecast(3, tc.sites)
		dg := n.diagnostics(&proposal{forecast: fc})
		if dg.LongForward != tc.long || float64(dg.PredictedForwardSeconds) != fc.Seconds || dg.PredictedFLOPs != fc.FLOPs {
			t.Errorf("N=%d: diagnostics %+v, forecast %+v: want long_forward %v", tc.sites, dg, fc, tc.long)
		}
	}
}
