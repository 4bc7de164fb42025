package flows

import (
	"math/rand/v2"
	"testing"

	"github.com/gomlx/compute"
	_ "github.com/gomlx/compute/gobackend"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
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
	backend, err := compute.NewWithConfig("go")
	if err != nil {
		b.Fatal(err)
	}
	const d, h, layers, S = 8, 32, 4, 4
	rng := rand.New(rand.NewPCG(1, 1))
	lins, params := gomlxIAFParams(d, h, layers, rng)
	fwdExec, gradExec, err := gomlxIAFExecs(backend, lins, layers)
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
	if _, err := fwdExec.Call(fargs...); err != nil {
		b.Fatal(err)
	}
	if _, err := gradExec.Call(gargs...); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		outs, err := fwdExec.Call(fargs...)
		if err != nil {
			b.Fatal(err)
		}
		_ = tensors.MustCopyFlatData[float64](outs[0])
		grads, err := gradExec.Call(gargs...)
		if err != nil {
			b.Fatal(err)
		}
		for _, t := range grads {
			_ = tensors.MustCopyFlatData[float64](t)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "steps/s")
}

// gomlxLin is one masked linear layer of the GoMLX IAF: x·(W∘mask) + b.
type gomlxLin struct {
	in, out int
	mask    []float64 // in×out, for x·W
}

// gomlxIAFParams builds the layers and their initial weights (W, b per
// layer) with masks from the package's own MADE, so both sides compute
// the same function. The output layer is split into its μ and α halves:
// the SimpleGo backend has no Pad, which the gradient of a slice needs.
func gomlxIAFParams(d, h, layers int, rng *rand.Rand) ([]gomlxLin, []any) {
	var lins []gomlxLin
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
				lins = append(lins, gomlxLin{li.in, out, mt})
				params = append(params, tensors.FromFlatDataAndDimensions(w, li.in, out),
					tensors.FromFlatDataAndDimensions(make([]float64, out), out))
			}
		}
	}
	return lins, params
}

// gomlxIAFExecs compiles the IAF's forward pass (z, log det) and the
// gradient of the surrogate Σ stop_grad(g)·z + log det in the weights.
func gomlxIAFExecs(backend compute.Backend, lins []gomlxLin, layers int) (fwd, grad *graph.Exec, err error) {
	apply := func(x *graph.Node, ps []*graph.Node, k int) *graph.Node {
		g := x.Graph()
		w := graph.Mul(ps[2*k], graph.Const(g, tensors.FromFlatDataAndDimensions(lins[k].mask, lins[k].in, lins[k].out)))
		return graph.Add(graph.MatMul(x, w), graph.InsertAxes(ps[2*k+1], 0))
	}
	forward := func(u *graph.Node, ps []*graph.Node) (z, ld *graph.Node) {
		z, ld = u, graph.ScalarZero(u.Graph(), u.DType())
		for l := range layers {
			k := 4 * l
			x := graph.Tanh(apply(z, ps, k))
			x = graph.Tanh(apply(x, ps, k+1))
			mu := apply(x, ps, k+2)
			a := graph.MulScalar(graph.Tanh(graph.DivScalar(apply(x, ps, k+3), 3)), 3)
			z = graph.Add(graph.Mul(z, graph.Exp(a)), mu)
			ld = graph.Add(ld, graph.ReduceAllSum(a))
		}
		return z, ld
	}
	fwd, err = graph.NewExec(backend, func(in []*graph.Node) []*graph.Node {
		z, ld := forward(in[0], in[1:])
		return []*graph.Node{z, ld}
	})
	if err != nil {
		return nil, nil, err
	}
	grad, err = graph.NewExec(backend, func(in []*graph.Node) []*graph.Node {
		u, gz, ps := in[0], in[1], in[2:]
		z, ld := forward(u, ps)
		loss := graph.Add(graph.ReduceAllSum(graph.Mul(graph.StopGradient(gz), z)), ld)
		return graph.Gradient(loss, ps...)
	})
	return fwd, grad, err
}
