package bench

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/afin-bench/afin/afin"
	"github.com/afin-bench/afin/factor"
	"github.com/afin-bench/afin/posterior"
)

// afinShared is the network both AFIN adapters of a run use: loaded once,
// with the set of input shapes already compiled.
type afinShared struct {
	once  sync.Once
	model *afin.Model
	hash  string
	err   error

	mu   sync.Mutex
	warm map[[2]int]bool
}

func (s *afinShared) load(dir string) (*afinShared, error) {
	s.once.Do(func() {
		if dir == "" {
			if dir, s.err = afin.DefaultCheckpointDir(); s.err != nil {
				return
			}
		}
		if s.model, s.err = afin.Load(dir); s.err != nil {
			s.err = fmt.Errorf("loading checkpoint %s: %w", dir, s.err)
			return
		}
		s.hash, s.err = fileHash(filepath.Join(dir, afin.CheckpointFile))
		s.warm = map[[2]int]bool{}
	})
	return s, s.err
}

func fileHash(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// forward runs the network on one task and returns its Gaussian and the
// wall-clock seconds of the pass. GoMLX compiles one program per input
// shape; the first task of a shape gets an untimed warm-up pass so the
// seconds are the per-task inference cost the paper reports, not the
// one-off compilation.
func (s *afinShared) forward(task *factor.Task) (*afin.Gaussian, float64, error) {
	shape := [2]int{task.D, task.N()}
	s.mu.Lock()
	cold := !s.warm[shape]
	s.warm[shape] = true
	s.mu.Unlock()
	if cold {
		if _, err := s.model.Forward([]*factor.Task{task}); err != nil {
			return nil, 0, fmt.Errorf("afin forward: %w", err)
		}
	}
	start := time.Now()
	gs, err := s.model.Forward([]*factor.Task{task})
	if err != nil {
		return nil, 0, fmt.Errorf("afin forward: %w", err)
	}
	return gs[0], time.Since(start).Seconds(), nil
}

// afinMethod is AFIN single shot: one forward pass, then draws from the
// Gaussian posterior approximation. Seconds are the pass plus sampling.
type afinMethod struct{ net *afinShared }

func newAFINMethod(env MethodEnv) (Method, error) {
	net, err := env.afinNet().load(env.Checkpoint)
	if err != nil {
		return nil, err
	}
	return afinMethod{net}, nil
}

func (afinMethod) Name() string { return "afin" }

func (afinMethod) Slots(p Plan) []Slot { return ladderSlots("draws", p.Ladder) }

func (m afinMethod) CheckpointHash() string { return m.net.hash }

func (m afinMethod) Run(ctx context.Context, job *Job, emit func(Point) error) error {
	for i, n := range job.Plan.Ladder {
		g, fwd, err := m.net.forward(job.Task)
		if err != nil {
			return err
		}
		start := time.Now()
		z := g.Sample(rand.New(rand.NewPCG(job.Seed, uint64(i))), n)
		secs := fwd + time.Since(start).Seconds()
		if err := emit(Point{
			Slot:        Slot{Kind: "draws", Budget: n},
			Draws:       &posterior.Draws{D: g.D, Z: z},
			Seconds:     secs,
			Diagnostics: map[string]float64{"forward_seconds": fwd, "jitter": g.Jitter},
			Settings:    map[string]any{"checkpoint_step": m.net.model.Step},
		}); err != nil {
			return err
		}
	}
	return nil
}

// afinSNISMethod uses the AFIN Gaussian as an SNIS proposal at a ladder
// of proposal counts, and emits the proposal itself (stage "proposal",
// the paper's star) with as many draws as the largest budget. Seconds are
// the forward pass plus sampling, log q and the target evaluations.
type afinSNISMethod struct{ net *afinShared }

func newAFINSNISMethod(env MethodEnv) (Method, error) {
	net, err := env.afinNet().load(env.Checkpoint)
	if err != nil {
		return nil, err
	}
	return afinSNISMethod{net}, nil
}

func (afinSNISMethod) Name() string { return "afin-snis" }

func (afinSNISMethod) Slots(p Plan) []Slot {
	return append(ladderSlots("proposals", p.Ladder), Slot{Stage: "proposal", Kind: "proposals", Budget: maxInt(p.Ladder)})
}

func (m afinSNISMethod) CheckpointHash() string { return m.net.hash }

func (m afinSNISMethod) Run(ctx context.Context, job *Job, emit func(Point) error) error {
	g, fwd, err := m.net.forward(job.Task)
	if err != nil {
		return err
	}
	settings := map[string]any{"checkpoint_step": m.net.model.Step}
	top := maxInt(job.Plan.Ladder)
	start := time.Now()
	z := g.Sample(rand.New(rand.NewPCG(job.Seed, 0x57a2)), top)
	if err := emit(Point{
		Slot:        Slot{Stage: "proposal", Kind: "proposals", Budget: top},
		Draws:       &posterior.Draws{D: g.D, Z: z},
		Seconds:     fwd + time.Since(start).Seconds(),
		Diagnostics: map[string]float64{"forward_seconds": fwd},
		Settings:    settings,
	}); err != nil {
		return err
	}
	for i, n := range job.Plan.Ladder {
		if err := ctx.Err(); err != nil {
			return err
		}
		start := time.Now()
		z := g.Sample(rand.New(rand.NewPCG(job.Seed, uint64(i))), n)
		logQ := make([]float64, n)
		logP := make([]float64, n)
		for s := range n {
			row := z[s*g.D : (s+1)*g.D]
			logQ[s] = g.LogQ(row)
			logP[s] = job.Task.LogDensity(row)
		}
		draws, info, err := posterior.SNIS(g.D, z, logQ, logP)
		if err != nil {
			return fmt.Errorf("afin-snis with %d proposals: %w", n, err)
		}
		diag := snisDiagnostics(info)
		diag["forward_seconds"] = fwd
		if err := emit(Point{
			Slot:        Slot{Kind: "proposals", Budget: n},
			Draws:       draws,
			Seconds:     fwd + time.Since(start).Seconds(),
			Diagnostics: diag,
			Settings:    settings,
		}); err != nil {
			return err
		}
	}
	return nil
}
