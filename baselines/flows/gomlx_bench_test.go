package flows

import (
	"math/rand/v2"
	"testing"

	"github.com/gomlx/gomlx/backends"
	_ "github.com/gomlx/gomlx/backends/simplego"
	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// BenchmarkGoMLXIAFStep is the alternative the package decided against:
// the same default IAF (4 layers, MADE 2×32 tanh, d = 8, 4 MC draws) as a
// GoMLX graph on the pure Go backend, with ∇z log p̃ fed in from Go through
// the surrogate Σ stop_grad(g)·z. One optimisation step needs two
// executions (z first, so that Go can evaluate g at z; then the
// gradient); this times both, without the target or Adam, against
// BenchmarkStep/iaf/d8_N64, which includes them.
//
//	GOMLX_BACKEND=go go test ./baselines/flows/ -run '^$' -bench 'GoMLX|Step/iaf/d8'
func BenchmarkGoMLXIAFStep(b *testing.B) {
	backend, err := backends.NewWithConfig("go")
	if err != nil {
		b.Fatal(err)
	}
	const d, h, layers, S = 8, 32, 4, 4
	rng := rand.New(rand.NewPCG(1, 1))
	// Masks from the package's own MADE, so both sides compute the same
	// function. The output layer is split into its μ and α halves: the
	// SimpleGo backend has no Pad, which the gradient of a slice needs.
	type lin struct {
		in, out int
		mask    []float64 // in×out, for x·W
	}
	var lins []lin
	var params []any
	for l := range layers {
		m := newMADE(degrees(d, l), h, 2, 2)
		for i := range m.lin {
			li := &m.lin[i]
			parts := [][2]int{{0, li.out}}
			if i == len(m.lin)-1 {
				parts = [][2]int{{0, d}, {d, 2 * d}}
			}
			for _, pr := range parts {
				out := pr[1] - pr[0]
				mt := make([]float64, li.in*out)
				w := make([]float64, li.in*out)
				for j := pr[0]; j < pr[1]; j++ {
					for k := range li.in {
						mt[k*out+j-pr[0]] = b2f(li.mask[j*li.in+k])
						w[k*out+j-pr[0]] = 0.1 * rng.NormFloat64() * mt[k*out+j-pr[0]]
					}
				}
				lins = append(lins, lin{li.in, out, mt})
				params = append(params, tensors.FromFlatDataAndDimensions(w, li.in, out),
					tensors.FromFlatDataAndDimensions(make([]float64, out), out))
			}
		}
	}
	apply := func(x *Node, ps []*Node, k int) *Node {
		g := x.Graph()
		w := Mul(ps[2*k], Const(g, tensors.FromFlatDataAndDimensions(lins[k].mask, lins[k].in, lins[k].out)))
		return Add(MatMul(x, w), InsertAxes(ps[2*k+1], 0))
	}
	forward := func(u *Node, ps []*Node) (z, ld *Node) {
		g := u.Graph()
		z = u
		ld = ScalarZero(g, u.DType())
		for l := range layers {
			k := 4 * l
			x := Tanh(apply(z, ps, k))
			x = Tanh(apply(x, ps, k+1))
			mu := apply(x, ps, k+2)
			a := MulScalar(Tanh(DivScalar(apply(x, ps, k+3), 3)), 3)
			z = Add(Mul(z, Exp(a)), mu)
			ld = Add(ld, ReduceAllSum(a))
		}
		return z, ld
	}
	fwdExec, err := NewExec(backend, func(in []*Node) []*Node {
		z, ld := forward(in[0], in[1:])
		return []*Node{z, ld}
	})
	if err != nil {
		b.Fatal(err)
	}
	gradExec, err := NewExec(backend, func(in []*Node) []*Node {
		u, gz, ps := in[0], in[1], in[2:]
		z, ld := forward(u, ps)
		loss := Add(ReduceAllSum(Mul(StopGradient(gz), z)), ld)
		return Gradient(loss, ps...)
	})
	if err != nil {
		b.Fatal(err)
	}
	uData := make([]float64, S*d)
	for i := range uData {
		uData[i] = rng.NormFloat64()
	}
	u := tensors.FromFlatDataAndDimensions(uData, S, d)
	gz := tensors.FromFlatDataAndDimensions(uData, S, d)
	fargs := append([]any{u}, params...)
	gargs := append([]any{u, gz}, params...)
	// Compile outside the timed loop.
	if _, err := fwdExec.Exec(fargs...); err != nil {
		b.Fatal(err)
	}
	if _, err := gradExec.Exec(gargs...); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		outs, err := fwdExec.Exec(fargs...)
		if err != nil {
			b.Fatal(err)
		}
		_ = tensors.MustCopyFlatData[float64](outs[0])
		grads, err := gradExec.Exec(gargs...)
		if err != nil {
			b.Fatal(err)
		}
		for _, t := range grads {
			_ = tensors.MustCopyFlatData[float64](t)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "steps/s")
}
