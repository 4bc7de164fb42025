package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/afin-bench/afin/afin"
	"github.com/afin-bench/afin/factor"
	"github.com/afin-bench/afin/posterior"
)

// afinStream is the PCG stream of AFIN's draws.
const afinStream = 0xaf1

// afinRun is one AFIN pass on a task: s draws with their log q, and for
// the Gaussian decoder its closed-form moments.
type afinRun struct {
	m         *afin.Model
	g         *afin.Gaussian // nil for the flow decoder
	z, logQ   []float64
	fwd, samp float64 // seconds: network forward pass, drawing (and log q)
}

// runAFIN loads the checkpoint (default: the shipped one), runs the
// network once and draws s points. Model loading is not timed.
func runAFIN(dir string, task *factor.Task, s int, seed uint64, wantLogQ bool) (*afinRun, error) {
	if dir == "" {
		var err error
		if dir, err = afin.DefaultCheckpointDir(); err != nil {
			return nil, err
		}
	}
	m, err := afin.Load(dir)
	if err != nil {
		return nil, err
	}
	r := &afinRun{m: m}
	rng := rand.New(rand.NewPCG(seed, afinStream))
	t0 := time.Now()
	if m.Cfg.Decoder == "flow" {
		// The flow's forward pass and its sampling are one graph.
		if r.z, r.logQ, err = m.SampleFlow(task, s, rng); err != nil {
			return nil, err
		}
		r.fwd = time.Since(t0).Seconds()
		return r, nil
	}
	gs, err := m.Forward([]*factor.Task{task})
	if err != nil {
		return nil, err
	}
	r.g = gs[0]
	r.fwd = time.Since(t0).Seconds()
	t1 := time.Now()
	if s > 0 {
		r.z = r.g.Sample(rng, s)
		if wantLogQ {
			d := task.D
			r.logQ = make([]float64, s)
			for n := range s {
				r.logQ[n] = r.g.LogQ(r.z[n*d : (n+1)*d])
			}
		}
	}
	r.samp = time.Since(t1).Seconds()
	return r, nil
}

func (r *afinRun) diagnostics() map[string]any {
	dg := map[string]any{
		"checkpoint":       r.m.Dir,
		"checkpoint_step":  r.m.Step,
		"checkpoint_hash":  r.m.Hash,
		"config":           r.m.Cfg.Name,
		"decoder":          r.m.Cfg.Decoder,
		"forward_seconds":  r.fwd,
		"sampling_seconds": r.samp,
	}
	if r.g != nil {
		dg["jitter"] = r.g.Jitter
	}
	return dg
}

// bindAFIN is the single forward pass: the Gaussian's mean and covariance
// (or, for a flow checkpoint, moments of its draws), plus --draws draws.
func bindAFIN(fs *flag.FlagSet) inferFunc {
	ckpt := fs.String("checkpoint", "", "afin: checkpoint directory (default: the shipped checkpoints/"+afin.DefaultCheckpointName+")")
	draws := fs.Int("draws", 2000, "afin: draws from the posterior (0: moments only; a flow checkpoint needs ≥ 2)")
	return func(ctx context.Context, task *factor.Task, opts inferOptions) (*inferResult, error) {
		if *draws < 0 {
			return nil, badInput(fmt.Errorf("--draws must be >= 0, got %d", *draws))
		}
		r, err := runAFIN(*ckpt, task, *draws, opts.Seed, false)
		if err != nil {
			return nil, err
		}
		res := &inferResult{Seconds: r.fwd + r.samp, Diagnostics: r.diagnostics()}
		if r.g != nil {
			t0 := time.Now()
			res.Mean, res.Cov = r.g.Mean, square(r.g.Cov(), task.D)
			res.Seconds += time.Since(t0).Seconds()
		} else if *draws < 2 {
			return nil, badInput(fmt.Errorf("--draws: a flow checkpoint reports moments of its draws, so it needs at least 2, got %d", *draws))
		}
		if len(r.z) > 0 {
			res.Draws = &posterior.Draws{D: task.D, Z: r.z}
		}
		return res, nil
	}
}
