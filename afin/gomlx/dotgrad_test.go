package gomlx

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
)

// afin differentiates its matrix products with GoMLX's own rule. Up to
// v0.26 that rule broadcast both operands to batch×cross×cross×contracted
// before reducing (on a paper-config pair tensor, gigabytes); afin then
// wired its own contraction gradient. From v0.28 the rule is itself a
// contraction. This test holds GoMLX to that: on a batched product with
// free axes on both sides, no node of the gradient's graph is larger
// than the largest operand or the product, and both gradients equal the
// contractions written out by hand.
func TestDotGradientIsAContraction(t *testing.T) {
	const B, H, I, K, J = 2, 3, 4, 5, 6
	rng := rand.New(rand.NewPCG(5, 6))
	randV := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(rng.NormFloat64())
		}
		return v
	}
	lhs, rhs, c := randV(B*H*I*K), randV(B*H*K*J), randV(B*H*I*J)
	be, err := newBackend("")
	if err != nil {
		t.Fatal(err)
	}
	defer be.Finalize()
	var largest int
	x, err := graph.NewExec(be, func(l, r, w *graph.Node) (gl, gr *graph.Node) {
		out := graph.DotGeneral(l, []int{3}, []int{0, 1}, r, []int{2}, []int{0, 1})
		g := graph.Gradient(graph.ReduceAllSum(graph.Mul(out, w)), l, r)
		for _, nd := range l.Graph().Nodes() {
			if nd.NumOutputs() == 1 {
				largest = max(largest, nd.Shape().Size())
			}
		}
		return g[0], g[1]
	})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Finalize()
	out, err := x.Call(tensors.FromFlatDataAndDimensions(lhs, B, H, I, K),
		tensors.FromFlatDataAndDimensions(rhs, B, H, K, J), tensors.FromFlatDataAndDimensions(c, B, H, I, J))
	if err != nil {
		t.Fatal(err)
	}
	defer finalize(out)
	if bound := max(B*H*I*K, B*H*K*J, B*H*I*J); largest > bound {
		t.Errorf("the gradient's graph holds a node of %d entries; the operands and the product have at most %d", largest, bound)
	}
	gl, gr := tensors.MustCopyFlatData[float32](out[0]), tensors.MustCopyFlatData[float32](out[1])
	var worst float64
	for bh := 0; bh < B*H; bh++ {
		for k := 0; k < K; k++ {
			for i := 0; i < I; i++ { // ∂/∂lhs[i,k] = Σ_j c[i,j]·rhs[k,j]
				var s float64
				for j := 0; j < J; j++ {
					s += float64(c[(bh*I+i)*J+j]) * float64(rhs[(bh*K+k)*J+j])
				}
				worst = math.Max(worst, math.Abs(s-float64(gl[(bh*I+i)*K+k])))
			}
			for j := 0; j < J; j++ { // ∂/∂rhs[k,j] = Σ_i lhs[i,k]·c[i,j]
				var s float64
				for i := 0; i < I; i++ {
					s += float64(lhs[(bh*I+i)*K+k]) * float64(c[(bh*I+i)*J+j])
				}
				worst = math.Max(worst, math.Abs(s-float64(gr[(bh*K+k)*J+j])))
			}
		}
	}
	if worst > 1e-5 {
		t.Errorf("GoMLX's gradient differs from the written-out contractions by %g", worst)
	}
}
