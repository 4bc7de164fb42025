package gomlx

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/afin-bench/afin/afin/arch"
	"github.com/afin-bench/afin/factor"
	. "github.com/gomlx/gomlx/core/graph" //nolint:staticcheck
	"github.com/gomlx/gomlx/core/tensors"
	"gonum.org/v1/gonum/mat"
)

// tinyConfig keeps the tests fast while exercising every module.
func tinyConfig() arch.Config {
	return arch.Config{Name: "tiny", Decoder: "gaussian", C: 8, AdapterH: 8, AdapterL: 2,
		EncLayers: 1, BoxH: 8, BoxL: 3, Blocks: 1, Heads: 2, MergeH: 8, MergeL: 3,
		DecH: 8, DecL: 2, OffdiagMul: 0.1}
}

// randomWeights fills every parameter (zero-initialised ones included)
// with random values, so no block is the identity and the symmetry tests
// cannot pass trivially.
func randomWeights(cfg arch.Config, seed uint64) ([]*arch.Tensor, [][]float32) {
	rng := rand.New(rand.NewPCG(seed, 3))
	ps := arch.MustNew(cfg).Tensors()
	data := make([][]float32, len(ps))
	for i, p := range ps {
		data[i] = make([]float32, p.Size())
		for k := range data[i] {
			data[i][k] = float32(0.5 * (2*rng.Float64() - 1))
		}
	}
	return ps, data
}

// mixedTasks draws tasks sharing (d, n) that cover all priors and, being
// heterogeneous, several likelihood families at once.
func mixedTasks(t *testing.T, seed uint64, d, n, b int) []*factor.Task {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 9))
	var tasks []*factor.Task
	for k := 0; k < b; k++ {
		o := factor.SimOptions{D: d, N: max(n, 1), Prior: factor.PriorFamilies[k%4], Likelihoods: factor.LikelihoodFamilies}
		tk, err := factor.Simulate(rng, o)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 { // the simulator draws N when asked for 0
			tk.Factors = nil
		}
		tasks = append(tasks, tk)
	}
	return tasks
}

func forwardTasks(t *testing.T, e *Engine, data [][]float32, tasks []*factor.Task, nPad int) ([]float32, []float32) {
	t.Helper()
	w := e.Weights(data)
	b, err := arch.NewBatch(context.Background(), tasks, nPad, nil)
	if err != nil {
		t.Fatal(err)
	}
	mu, lam, err := e.Forward(context.Background(), w, b)
	if err != nil {
		t.Fatal(err)
	}
	return mu, lam
}

func assertClose(t *testing.T, what string, got, want []float32, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: length %d, want %d", what, len(got), len(want))
	}
	for i := range got {
		g, w := float64(got[i]), float64(want[i])
		if math.Abs(g-w) > tol*(1+math.Abs(w)) || math.IsNaN(g) {
			t.Fatalf("%s[%d] = %g, want %g (tol %g)", what, i, g, w, tol)
		}
	}
}

func TestFactorisedFirstLayerMatchesConcatenation(t *testing.T) {
	cfg := tinyConfig()
	_, w := randomWeights(cfg, 1)
	fact, err := newEngine(cfg, false, "")
	if err != nil {
		t.Fatal(err)
	}
	full, err := newEngine(cfg, true, "")
	if err != nil {
		t.Fatal(err)
	}
	tasks := mixedTasks(t, 2, 3, 5, 4)
	mu1, lam1 := forwardTasks(t, fact, w, tasks, 0)
	mu2, lam2 := forwardTasks(t, full, w, tasks, 0)
	assertClose(t, "mu", mu1, mu2, 1e-4)
	assertClose(t, "lambda", lam1, lam2, 1e-4)
}

// The training graph's forms (the factorised first layer; Q, K and V,
// and the families' adapters, stacked into one product per layer)
// against the literal network: concatenated inputs, one MLP per map.
func TestFactorisedTrainingMatchesConcatenation(t *testing.T) {
	cfg := tinyConfig()
	_, w := randomWeights(cfg, 5)
	b := trainBatch(t, 53, 4, 9, 3)
	var loss [2]float64
	var grads [2][][]float32
	for i, literal := range []bool{false, true} {
		e, err := newEngine(cfg, literal, "")
		if err != nil {
			t.Fatal(err)
		}
		if loss[i], _, grads[i], err = e.LossGrad(context.Background(), e.Weights(w), b, 1); err != nil {
			t.Fatal(err)
		}
	}
	r := relErr(grads[0], grads[1])
	t.Logf("loss %.7g (literal %.7g); gradient %.2e relative", loss[0], loss[1], r)
	if math.Abs(loss[0]-loss[1]) > 1e-5*math.Max(1, math.Abs(loss[1])) || !(r <= 1e-5) {
		t.Errorf("factorised training graph: loss %g against %g, gradient %.2e relative (want ≤ 1e-5)", loss[0], loss[1], r)
	}
}

func TestPaddedBatchEqualsSingleTasks(t *testing.T) {
	cfg := tinyConfig()
	_, w := randomWeights(cfg, 4)
	e, err := newEngine(cfg, false, "")
	if err != nil {
		t.Fatal(err)
	}
	// Different N per task in one batch, padded to a bucket.
	var tasks []*factor.Task
	for k, n := range []int{0, 1, 3, 6} {
		tasks = append(tasks, mixedTasks(t, uint64(10+k), 3, n, 1)...)
	}
	mu, lam := forwardTasks(t, e, w, tasks, BucketN(6))
	d := 3
	for k, tk := range append(tasks, tasks...) {
		k %= len(tasks)
		m1, l1 := forwardTasks(t, e, w, []*factor.Task{tk}, 0)
		assertClose(t, "mu", mu[k*d:(k+1)*d], m1, 1e-5)
		assertClose(t, "lambda", lam[k*d*d:(k+1)*d*d], l1, 1e-5)
	}
}

// permuteTask relabels the latent coordinates: new coordinate i is old
// coordinate perm[i], in every vector and matrix of the task.
func permuteTask(t *factor.Task, perm []int) *factor.Task {
	d := t.D
	pv := func(v []float64) []float64 {
		out := make([]float64, d)
		for i, p := range perm {
			out[i] = v[p]
		}
		return out
	}
	out := &factor.Task{Name: t.Name, D: d}
	switch p := t.Prior.(type) {
	case *factor.DiagGaussian:
		out.Prior = &factor.DiagGaussian{Loc: pv(p.Loc), Scale: pv(p.Scale)}
	case *factor.DiagLaplace:
		out.Prior = &factor.DiagLaplace{Loc: pv(p.Loc), Scale: pv(p.Scale)}
	case *factor.DiagStudentT:
		out.Prior = &factor.DiagStudentT{Loc: pv(p.Loc), Scale: pv(p.Scale), DF: p.DF}
	case *factor.FullRankGaussian:
		prec := make([]float64, d*d)
		for i := range d {
			for j := range d {
				prec[i*d+j] = p.Precision[perm[i]*d+perm[j]]
			}
		}
		fr, err := factor.NewFullRankGaussian(pv(p.Loc), prec)
		if err != nil {
			panic(err)
		}
		out.Prior = fr
	}
	for _, f := range t.Factors {
		switch f := f.(type) {
		case *factor.Gaussian:
			out.Factors = append(out.Factors, &factor.Gaussian{Y: pv(f.Y), Sigma: f.Sigma})
		case *factor.LinGaussian:
			out.Factors = append(out.Factors, &factor.LinGaussian{X: pv(f.X), Y: f.Y, Sigma: f.Sigma})
		case *factor.LinStudentT:
			out.Factors = append(out.Factors, &factor.LinStudentT{X: pv(f.X), Y: f.Y, Sigma: f.Sigma, DF: f.DF})
		case *factor.BernoulliLogit:
			out.Factors = append(out.Factors, &factor.BernoulliLogit{X: pv(f.X), Y: f.Y})
		case *factor.BinomialLogit:
			out.Factors = append(out.Factors, &factor.BinomialLogit{X: pv(f.X), Y: f.Y, Trials: f.Trials})
		}
	}
	return out
}

func TestLatentPermutationEquivariance(t *testing.T) {
	cfg := tinyConfig()
	_, w := randomWeights(cfg, 5)
	e, err := newEngine(cfg, false, "")
	if err != nil {
		t.Fatal(err)
	}
	const d = 4
	perm := []int{2, 0, 3, 1}
	tasks := mixedTasks(t, 6, d, 5, 4)
	var permuted []*factor.Task
	for _, tk := range tasks {
		permuted = append(permuted, permuteTask(tk, perm))
	}
	mu, lam := forwardTasks(t, e, w, tasks, 0)
	muP, lamP := forwardTasks(t, e, w, permuted, 0)
	for k := range tasks {
		wantMu := make([]float32, d)
		wantLam := make([]float32, d*d)
		for i := range d {
			wantMu[i] = mu[k*d+perm[i]]
			for j := range d {
				wantLam[i*d+j] = lam[k*d*d+perm[i]*d+perm[j]]
			}
		}
		assertClose(t, "permuted mu", muP[k*d:(k+1)*d], wantMu, 1e-4)
		assertClose(t, "permuted lambda", lamP[k*d*d:(k+1)*d*d], wantLam, 1e-4)
	}
}

func TestFactorPermutationInvariance(t *testing.T) {
	cfg := tinyConfig()
	_, w := randomWeights(cfg, 7)
	e, err := newEngine(cfg, false, "")
	if err != nil {
		t.Fatal(err)
	}
	tasks := mixedTasks(t, 8, 3, 7, 3)
	rng := rand.New(rand.NewPCG(1, 1))
	var shuffled []*factor.Task
	for _, tk := range tasks {
		c := *tk
		c.Factors = append([]factor.Likelihood(nil), tk.Factors...)
		rng.Shuffle(len(c.Factors), func(i, j int) { c.Factors[i], c.Factors[j] = c.Factors[j], c.Factors[i] })
		shuffled = append(shuffled, &c)
	}
	mu, lam := forwardTasks(t, e, w, tasks, 0)
	mu2, lam2 := forwardTasks(t, e, w, shuffled, 0)
	assertClose(t, "mu", mu2, mu, 1e-4)
	assertClose(t, "lambda", lam2, lam, 1e-4)
}

func TestPrecisionIsSymmetricPositiveDefinite(t *testing.T) {
	cfg := tinyConfig()
	_, w := randomWeights(cfg, 11)
	e, err := newEngine(cfg, false, "")
	if err != nil {
		t.Fatal(err)
	}
	const d = 5
	_, lam := forwardTasks(t, e, w, mixedTasks(t, 12, d, 4, 4), 0)
	for k := 0; k < 4; k++ {
		s := mat.NewSymDense(d, nil)
		for i := range d {
			for j := range d {
				a, b := lam[k*d*d+i*d+j], lam[k*d*d+j*d+i]
				if a != b {
					t.Fatalf("task %d: Λ[%d][%d]=%g but Λ[%d][%d]=%g", k, i, j, a, j, i, b)
				}
				s.SetSym(i, j, float64(a))
			}
		}
		var ch mat.Cholesky
		if !ch.Factorize(s) {
			t.Fatalf("task %d: Λ is not positive definite", k)
		}
	}
}

func TestGaussLogQMatchesClosedForm(t *testing.T) {
	be, err := newBackend("")
	if err != nil {
		t.Fatal(err)
	}
	exe, err := NewExec(be, func(mu, lam, z *Node) *Node { return (&net{}).gaussLogQ(mu, lam, z) })
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(2, 2))
	for _, d := range []int{1, 2, 5, 9} {
		const B = 3
		mu := make([]float32, B*d)
		z := make([]float32, B*d)
		lam := make([]float32, B*d*d)
		for k := 0; k < B; k++ {
			// Λ = M Mᵀ + 0.5 I is SPD but not diagonally dominant in general.
			m := mat.NewDense(d, d, nil)
			for i := range d {
				mu[k*d+i] = float32(rng.NormFloat64())
				z[k*d+i] = float32(rng.NormFloat64())
				for j := range d {
					m.Set(i, j, rng.NormFloat64())
				}
			}
			var a mat.Dense
			a.Mul(m, m.T())
			for i := range d {
				for j := range d {
					v := a.At(i, j) / float64(d)
					if i == j {
						v += 0.5
					}
					lam[k*d*d+i*d+j] = float32(v)
				}
			}
		}
		out, err := exe.Call(tensors.FromFlatDataAndDimensions(mu, B, d), tensors.FromFlatDataAndDimensions(lam, B, d, d), tensors.FromFlatDataAndDimensions(z, B, d))
		if err != nil {
			t.Fatal(err)
		}
		got := tensors.MustCopyFlatData[float32](out[0])
		for k := 0; k < B; k++ {
			s := mat.NewSymDense(d, nil)
			for i := range d {
				for j := range d {
					s.SetSym(i, j, float64(lam[k*d*d+i*d+j]))
				}
			}
			var ch mat.Cholesky
			if !ch.Factorize(s) {
				t.Fatal("test matrix not SPD")
			}
			r := mat.NewVecDense(d, nil)
			for i := range d {
				r.SetVec(i, float64(z[k*d+i]-mu[k*d+i]))
			}
			q := mat.Inner(r, s, r)
			want := 0.5*ch.LogDet() - 0.5*q - 0.5*float64(d)*math.Log(2*math.Pi)
			if math.Abs(float64(got[k])-want) > 1e-4*(1+math.Abs(want)) {
				t.Errorf("d=%d task %d: log q = %g, want %g", d, k, got[k], want)
			}
		}
	}
}

// Every declared tensor is used by the graph: with random weights each
// one gets a non-zero gradient (a tensor declared but not wired in, or
// wired to the wrong block, would show as an all-zero gradient). The one
// exception is by design: the couplings' refining BoxMLP has a pair branch
// (in the authors' model and the paper's parameter count) whose output is
// discarded.
func TestEveryDeclaredTensorIsUsed(t *testing.T) {
	for _, cfg := range []arch.Config{tinyConfig(), tinyFlowConfig()} {
		_, w := randomWeights(cfg, 41)
		e, err := newEngine(cfg, false, "")
		if err != nil {
			t.Fatal(err)
		}
		var tasks []*factor.Task
		rng := rand.New(rand.NewPCG(42, 1))
		for k := range 4 { // every prior family; every likelihood family across the batch
			o := factor.SimOptions{D: 3, N: 6, Prior: factor.PriorFamilies[k], Likelihoods: factor.LikelihoodFamilies}
			tk, err := factor.Simulate(rng, o)
			if err != nil {
				t.Fatal(err)
			}
			tasks = append(tasks, tk)
		}
		z := make([][]float64, len(tasks))
		for i, tk := range tasks {
			z[i] = tk.TrueZ
		}
		b, err := arch.NewBatch(context.Background(), tasks, 0, z)
		if err != nil {
			t.Fatal(err)
		}
		_, _, grads, err := e.LossGrad(context.Background(), e.Weights(w), b, 1)
		if err != nil {
			t.Fatal(err)
		}
		for i, g := range grads {
			if strings.Contains(e.params[i].Name, "/box/pair/") {
				if slices.IndexFunc(g, func(v float32) bool { return v != 0 }) >= 0 {
					t.Errorf("%s: the unused %s has a gradient", cfg.Decoder, e.params[i].Name)
				}
				continue
			}
			if slices.IndexFunc(g, func(v float32) bool { return v != 0 }) < 0 {
				t.Errorf("%s: %s has an all-zero gradient", cfg.Decoder, e.params[i].Name)
			}
		}
	}
}
