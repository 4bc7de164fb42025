package methods

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/afin-bench/afin/factor"
	"github.com/afin-bench/afin/internal/cputime"
	"github.com/afin-bench/afin/internal/streams"
)

// BenchmarkAFINFitCheck sets the cost of an AFIN answer measuring its own
// fit (proposal.measure) beside the answer itself (the forward pass and
// the draws, network.run) on the shipped checkpoint at d=8, N=64, for
// the draw counts of the smoke and quick profiles. Besides wall time it
// reports the process's CPU time per operation (cpu-ns/op), the fairer
// cost on a shared machine:
//
//	go test ./methods -run '^$' -bench AFINFitCheck -benchtime 200x
func BenchmarkAFINFitCheck(b *testing.B) {
	m, err := New("afin", &Env{Checkpoint: filepath.Join("..", "checkpoints", "small-full")})
	if err != nil {
		b.Fatal("shipped checkpoint: ", err)
	}
	net := m.(afinMethod).net
	task, err := factor.Simulate(rand.New(rand.NewPCG(8, 64)), factor.SimOptions{D: 8, N: 64,
		Prior: "diag_gaussian", Likelihoods: []string{"bernoulli_logit"}, Design: factor.DesignIID})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for _, n := range []int{500, 2000} {
		p, err := net.run(ctx, task, n, streams.New(1, streams.AFINLadder))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprint("answer/draws=", n), func(b *testing.B) {
			defer reportCPU(b)()
			for i := range b.N {
				if _, err := net.run(ctx, task, n, streams.New(uint64(i), streams.AFINLadder)); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprint("check/draws=", n), func(b *testing.B) {
			defer reportCPU(b)()
			for i := range b.N {
				fd, err := p.measure(ctx, task, streams.New(uint64(i), streams.AFINFitCheck))
				if err != nil || fd.FitDraws == 0 {
					b.Fatal(err)
				}
			}
		})
	}
}

// reportCPU starts counting the process's CPU time; the function it
// returns reports it per operation.
func reportCPU(b *testing.B) func() {
	start := cpuNanos()
	return func() { b.ReportMetric(float64(cpuNanos()-start)/float64(b.N), "cpu-ns/op") }
}

func cpuNanos() int64 {
	c, err := cputime.Process()
	if err != nil {
		return 0
	}
	return int64(c * 1e9)
}
