package cholesky

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/afin-bench/afin/internal/countctx"
)

// spd returns a random symmetric positive definite d×d matrix with
// condition number around 10³.
func spd(rng *rand.Rand, d int) []float64 {
	g := make([]float64, d*d)
	for i := range g {
		g[i] = rng.NormFloat64()
	}
	a := make([]float64, d*d)
	for i := 0; i < d; i++ {
		for j := 0; j <= i; j++ {
			var s float64
			for k := 0; k < d; k++ {
				s += g[i*d+k] * g[j*d+k]
			}
			a[i*d+j], a[j*d+i] = s/float64(d), s/float64(d)
		}
		a[i*d+i] += 1e-3
	}
	return a
}

// maxAbsDiff is the largest |x − y| entry.
func maxAbsDiff(x, y []float64) float64 {
	var m float64
	for i := range x {
		m = math.Max(m, math.Abs(x[i]-y[i]))
	}
	return m
}

// The blocked routines agree with gonum's unblocked answers at sizes
// below, at and across the block width and the row chunk.
func TestAgainstGonum(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, d := range []int{1, 2, 7, block - 1, block, block + 1, 2*block + 37, rowChunk + block + 60} {
		t.Run(fmt.Sprint(d), func(t *testing.T) {
			a := spd(rng, d)
			sym := mat.NewSymDense(d, append([]float64(nil), a...))
			var ch mat.Cholesky
			if !ch.Factorize(sym) {
				t.Fatal("gonum: not PD")
			}
			var lt mat.TriDense
			ch.LTo(&lt)
			want := mat.NewDense(d, d, nil)
			want.Copy(&lt)
			l := append([]float64(nil), a...)
			ok, err := Factor(context.Background(), l, d)
			if err != nil || !ok {
				t.Fatalf("Factor: ok %v, err %v", ok, err)
			}
			if e := maxAbsDiff(l, want.RawMatrix().Data); e > 1e-10 {
				t.Errorf("L differs from gonum's by %.3g", e)
			}
			inv, err := InvertLower(context.Background(), l, d)
			if err != nil {
				t.Fatal(err)
			}
			var prod mat.Dense
			prod.Mul(mat.NewDense(d, d, l), mat.NewDense(d, d, inv))
			if e := maxAbsDiff(prod.RawMatrix().Data, eye(d)); e > 1e-9 {
				t.Errorf("L·L⁻¹ differs from I by %.3g", e)
			}
			cl, ok, err := CovarianceFactor(context.Background(), a, d)
			if err != nil || !ok {
				t.Fatalf("CovarianceFactor: ok %v, err %v", ok, err)
			}
			var cov mat.Dense
			c := mat.NewDense(d, d, cl)
			cov.Mul(c, c.T())
			prod.Mul(mat.NewDense(d, d, a), &cov)
			if e := maxAbsDiff(prod.RawMatrix().Data, eye(d)); e > 1e-8 {
				t.Errorf("P·LLᵀ differs from I by %.3g", e)
			}
			for i := 0; i < d; i++ {
				for j := i + 1; j < d; j++ {
					if l[i*d+j] != 0 || inv[i*d+j] != 0 || cl[i*d+j] != 0 {
						t.Fatalf("entry (%d,%d) above the diagonal is not 0", i, j)
					}
				}
			}
		})
	}
}

func eye(d int) []float64 {
	e := make([]float64, d*d)
	for i := 0; i < d; i++ {
		e[i*d+i] = 1
	}
	return e
}

// Matrices that are not positive definite are reported, not factored.
func TestNotPD(t *testing.T) {
	for _, tc := range []struct {
		name string
		a    []float64
	}{
		{"negative", []float64{-1}},
		{"indefinite", []float64{1, 2, 2, 1}},
		{"NaN", []float64{1, 0, math.NaN(), 1}},
		{"Inf", []float64{math.Inf(1), 0, 0, 1}},
	} {
		d := int(math.Sqrt(float64(len(tc.a))))
		if ok, err := Factor(context.Background(), append([]float64(nil), tc.a...), d); ok || err != nil {
			t.Errorf("%s: Factor ok %v, err %v", tc.name, ok, err)
		}
		if _, ok, err := CovarianceFactor(context.Background(), tc.a, d); ok || err != nil {
			t.Errorf("%s: CovarianceFactor ok %v, err %v", tc.name, ok, err)
		}
	}
}

// TestCancel cancels at every look at the context of a run over several
// blocks and checks each routine returns ctx.Err() at once: no further
// look, so no further block of work.
func TestCancel(t *testing.T) {
	d := 3*block + 5
	a := spd(rand.New(rand.NewPCG(3, 4)), d)
	whole := countctx.CancelAt(0)
	defer whole.Stop()
	if _, ok, err := CovarianceFactor(whole, a, d); err != nil || !ok {
		t.Fatal(ok, err)
	}
	looks := whole.Calls()
	if looks < 20 {
		t.Fatalf("%d looks at the context over a %d×%d factor and inverse, want ≥ 20", looks, d, d)
	}
	for at := int64(1); at <= looks; at++ {
		ctx := countctx.CancelAt(at)
		_, _, err := CovarianceFactor(ctx, a, d)
		ctx.Stop()
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("cancel at look %d of %d: err %v, want context.Canceled", at, looks, err)
		}
		if ctx.After() != 0 {
			t.Fatalf("cancel at look %d of %d: %d more looks (blocks of work) after it", at, looks, ctx.After())
		}
	}
}
