package gomlx

import (
	"context"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/afin-bench/afin/afin/arch"
	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// gomlxDotVJP is GoMLX's own DotGeneral gradient rule, taken before any
// graph of this test binary is built.
var gomlxDotVJP = reflect.ValueOf(graph.VJPRegistration[graph.NodeTypeDotGeneral]).Pointer()

// afin's contraction gradient is its graphs' own: after a training pass
// GoMLX's process-wide DotGeneral rule is still GoMLX's, so a DotGeneral
// in another graph is differentiated by the library; and the two rules
// agree on a batched contraction with free axes on both sides (the case
// afin rewrites).
func TestDotGradientScopedToAfinGraphs(t *testing.T) {
	cfg := tinyConfig()
	_, w := randomWeights(cfg, 3)
	e, err := newEngine(cfg, false, "")
	if err != nil {
		t.Fatal(err)
	}
	tasks := mixedTasks(t, 4, 3, 5, 2)
	z := make([][]float64, len(tasks))
	for i, tk := range tasks {
		z[i] = tk.TrueZ
	}
	b, err := arch.NewBatch(context.Background(), tasks, 0, z)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := e.LossGrad(context.Background(), e.Weights(w), b, 1); err != nil {
		t.Fatal(err)
	}
	if got := reflect.ValueOf(graph.VJPRegistration[graph.NodeTypeDotGeneral]).Pointer(); got != gomlxDotVJP {
		t.Fatal("building afin's gradient replaced GoMLX's DotGeneral rule for every graph")
	}

	// (batch 2, heads 3, 4 queries, 5 channels) · (2, 3, 5 channels, 6 keys).
	be, err := newBackend("")
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	randT := func(dims ...int) *tensors.Tensor {
		n := 1
		for _, d := range dims {
			n *= d
		}
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(rng.NormFloat64())
		}
		return tensors.FromFlatDataAndDimensions(v, dims...)
	}
	lc, lb, rc, rb := []int{3}, []int{0, 1}, []int{2}, []int{0, 1}
	x, err := graph.NewExec(be, func(in []*graph.Node) []*graph.Node {
		lhs, rhs, c := in[0], in[1], in[2]
		own := graph.DotGeneral(lhs, lc, lb, rhs, rc, rb)
		mine := (&net{grad: true}).dot(lhs, lc, lb, rhs, rc, rb)
		gOwn := graph.Gradient(graph.ReduceAllSum(graph.Mul(own, c)), lhs, rhs)
		gMine := graph.Gradient(graph.ReduceAllSum(graph.Mul(mine, c)), lhs, rhs)
		return []*graph.Node{own, mine, gOwn[0], gMine[0], gOwn[1], gMine[1]}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Finalize()
	out, err := x.Exec(randT(2, 3, 4, 5), randT(2, 3, 5, 6), randT(2, 3, 4, 6))
	if err != nil {
		t.Fatal(err)
	}
	defer finalize(out)
	for k, what := range []string{"value", "gradient wrt lhs", "gradient wrt rhs"} {
		own := tensors.MustCopyFlatData[float32](out[2*k])
		mine := tensors.MustCopyFlatData[float32](out[2*k+1])
		var worst float64
		for i := range own {
			worst = math.Max(worst, math.Abs(float64(own[i]-mine[i])))
		}
		if worst > 1e-5 {
			t.Errorf("%s: afin's rule differs from GoMLX's by %g", what, worst)
		}
	}
}
