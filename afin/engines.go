package afin

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/afin-bench/afin/afin/cpu"
	"github.com/afin-bench/afin/afin/engine"
	"github.com/afin-bench/afin/factor"
)

// EngineAgreement compares the network's two implementations on the same
// weights: the GoMLX graph on the backend GOMLX_BACKEND names (on a GPU,
// XLA/CUDA) and the native CPU path. It is the check a GPU run starts
// with (deploy/gpu): both must compute the same function.
type EngineAgreement struct {
	Backend    string  `json:"backend"`
	Batches    int     `json:"batches"`
	Tasks      int     `json:"tasks"`
	MaxRelMean float64 `json:"max_rel_mean"` // Gaussian: ‖Δμ‖/‖μ‖, worst task
	MaxRelPrec float64 `json:"max_rel_precision"`
	MaxAbsLogQ float64 `json:"max_abs_logq"` // flow: |Δ log q| at native draws
	// Compiles counts the GoMLX programs built; GoMLXSeconds includes
	// them, the first call at each shape being a compilation.
	Compiles      int     `json:"compiles"`
	GoMLXSeconds  float64 `json:"gomlx_seconds"`
	NativeSeconds float64 `json:"native_seconds"`
}

// CompareEngines runs batches of tasks drawn from the paper's training
// mixture (seeded; d ≤ dMax, N ≤ nMax) through both implementations.
func (m *Model) CompareEngines(ctx context.Context, seed uint64, batches, perBatch, dMax, nMax int) (EngineAgreement, error) {
	ag := EngineAgreement{Backend: m.Engine.Backend}
	if ag.Backend == "" {
		ag.Backend = "go"
	}
	native, err := cpu.NewNetFromData(m.Cfg, m.wdata)
	if err != nil {
		return ag, err
	}
	nat := engine.BindNative(native)
	gom, err := m.gomlx()
	if err != nil {
		return ag, err
	}
	rng := rand.New(rand.NewPCG(seed, 0xe9))
	for range batches {
		tasks, err := factor.SimulateBatch(rng, factor.SimOptions{DMax: dMax, NMax: nMax}, perBatch)
		if err != nil {
			return ag, err
		}
		nMax := 0
		for _, t := range tasks {
			nMax = max(nMax, t.N())
		}
		if err := cpu.CheckBatchMemory(m.Cfg, len(tasks), tasks[0].D, nMax, cpu.AvailableBytes()); err != nil {
			return ag, err
		}
		b, err := NewBatch(ctx, tasks, 0, nil)
		if err != nil {
			return ag, err
		}
		if m.Cfg.Decoder == "flow" {
			err = compareFlow(ctx, &ag, nat, gom, b, rng)
		} else {
			err = compareGaussian(ctx, &ag, nat, gom, b)
		}
		if err != nil {
			return ag, fmt.Errorf("afin: d=%d N=%d: %w", b.D, b.NPad, err)
		}
		ag.Batches++
		ag.Tasks += len(tasks)
	}
	ag.Compiles = m.gomBd.Stats().Programs
	return ag, nil
}

// timed runs f and adds its wall time to *sec.
func timed(sec *float64, f func() error) error {
	t := time.Now()
	err := f()
	*sec += time.Since(t).Seconds()
	return err
}

func compareGaussian(ctx context.Context, ag *EngineAgreement, nat, gom engine.Bound, b *Batch) error {
	var mu1, lam1, mu2, lam2 []float32
	if err := timed(&ag.NativeSeconds, func() (err error) { mu1, lam1, err = nat.Gaussian(ctx, b); return }); err != nil {
		return err
	}
	if err := timed(&ag.GoMLXSeconds, func() (err error) { mu2, lam2, err = gom.Gaussian(ctx, b); return }); err != nil {
		return err
	}
	d := b.D
	for k := range b.B {
		ag.MaxRelMean = math.Max(ag.MaxRelMean, relDiff(mu1[k*d:(k+1)*d], mu2[k*d:(k+1)*d]))
		ag.MaxRelPrec = math.Max(ag.MaxRelPrec, relDiff(lam1[k*d*d:(k+1)*d*d], lam2[k*d*d:(k+1)*d*d]))
	}
	return nil
}

func compareFlow(ctx context.Context, ag *EngineAgreement, nat, gom engine.Bound, b *Batch, rng *rand.Rand) error {
	const s = 16
	eps := make([]float32, b.B*s*b.D)
	for i := range eps {
		eps[i] = float32(rng.NormFloat64())
	}
	var z, lq1, lq2 []float32
	if err := timed(&ag.NativeSeconds, func() (err error) { z, lq1, err = nat.FlowSample(ctx, b, eps, s); return }); err != nil {
		return err
	}
	if err := timed(&ag.GoMLXSeconds, func() (err error) { lq2, err = gom.FlowLogQ(ctx, b, z, s); return }); err != nil {
		return err
	}
	for i := range lq1 {
		ag.MaxAbsLogQ = math.Max(ag.MaxAbsLogQ, math.Abs(float64(lq1[i])-float64(lq2[i])))
	}
	return nil
}

// relDiff is ‖a−b‖/max(‖b‖, 10⁻¹²) in float64.
func relDiff(a, b []float32) float64 {
	var num, den float64
	for i := range a {
		e := float64(a[i]) - float64(b[i])
		num += e * e
		den += float64(b[i]) * float64(b[i])
	}
	return math.Sqrt(num) / math.Max(math.Sqrt(den), 1e-12)
}
