package factor

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/afin-bench/afin/internal/cholesky"
	"github.com/afin-bench/afin/posterior"
)

// Design-matrix family names (facts sheet §8, "Design matrices X").
const (
	DesignIID        = "iid"
	DesignDiagScale  = "diag_scale"
	DesignCorrelated = "correlated"
	DesignStudentT   = "student_t"
)

// DesignFamilies lists the design families in the order of the paper's
// design IDs.
var DesignFamilies = []string{DesignIID, DesignDiagScale, DesignCorrelated, DesignStudentT}

// Simulator constants from the paper's App. D.2 and the facts sheet §8.
const (
	simPHard      = 0.6  // weight of the hard-biased (d, N) distribution
	simAlphaD     = 1.0  // exponent on the relative d in the hard distribution
	simAlphaN     = 0.75 // exponent on N_min/N in the hard distribution
	simLocScale   = 0.45 // μ ~ 0.45·N(0, I)
	simPriorM     = 0.3  // fullrank: M_ij ~ 0.3·N(0,1)
	simPriorRidge = 0.5  // fullrank: Λ = M Mᵀ/d + 0.5 I
	simBaseScale  = 0.9  // design rows scaled by 0.9/√d
	simKappaMax   = 40.0 // training κ_max of the design spectra
	simDirichlet  = 0.5  // heterogeneous mixture weights ~ Dirichlet(0.5·1_k)
	simHomogP     = 0.5  // probability a multi-site task is homogeneous
	simTrialsMin  = 2    // binomial n_c ~ UniformInt{2..8}, per site
	simTrialsMax  = 8
)

// The simulator's per-task parameter distributions (facts sheet §8): one
// declaration each, read both by the draws and by TrainingRanges, so the
// ranges a checkpoint records are those its tasks were drawn from.
var (
	simSigmaLin     = logUniform{-0.8, -0.05} // lin_gaussian σ
	simSigmaVec     = logUniform{-0.8, -0.05} // gaussian (vector) σ
	simSigmaT       = logUniform{-0.7, 0}     // lin_student_t σ
	simDFT          = uniformRange{3.5, 8}    // lin_student_t ν
	simScaleGauss   = logUniform{-0.8, 0}     // diag_gaussian scales
	simScaleT       = logUniform{-0.7, 0}     // diag_student_t scales
	simDFPriorT     = uniformRange{3, 8}      // diag_student_t ν
	simScaleLaplace = logUniform{-1.0, -0.05} // diag_laplace scales
)

// uniformRange is U(lo, hi).
type uniformRange struct{ lo, hi float64 }

func (u uniformRange) draw(rng *rand.Rand) float64 { return uniform(rng, u.lo, u.hi) }
func (u uniformRange) interval() Interval          { return Interval{u.lo, u.hi} }

// logUniform is exp(U(lo, hi)).
type logUniform struct{ lo, hi float64 }

func (u logUniform) draw(rng *rand.Rand) float64 { return math.Exp(uniform(rng, u.lo, u.hi)) }
func (u logUniform) interval() Interval          { return Interval{math.Exp(u.lo), math.Exp(u.hi)} }

// SimOptions selects what Simulate draws. Zero values give the paper's
// training distribution.
type SimOptions struct {
	D, N                   int // fixed when > 0; else drawn from the paper's hard/uniform mixture
	DMin, DMax, NMin, NMax int // mixture support; zero values mean 1,16,1,256
	// Prior is one prior family name; "" draws uniformly over the 4.
	Prior string
	// Likelihoods nil gives the paper's homogeneous/heterogeneous
	// assignment over all 5 families; one name gives a homogeneous task;
	// several give a heterogeneous task over exactly those (each present
	// when N allows it).
	Likelihoods []string
	// Design is one design family; "" is the training mixture (iid 0.7,
	// diag_scale, correlated, student_t 0.1 each).
	Design string
	// KappaMax bounds the condition number of the design spectra; 0 means 40.
	KappaMax float64
}

// support returns the (d, N) mixture support with zero values defaulted and
// inverted ranges collapsed, so SampleDN never fails.
// Support is the (d, N) support the options simulate, defaults filled in.
func (o SimOptions) Support() (dMin, dMax, nMin, nMax int) { return o.support() }

func (o SimOptions) support() (dMin, dMax, nMin, nMax int) {
	dMin, dMax, nMin, nMax = o.DMin, o.DMax, o.NMin, o.NMax
	if dMin <= 0 {
		dMin = 1
	}
	if dMax <= 0 {
		dMax = 16
	}
	if nMin <= 0 {
		nMin = 1
	}
	if nMax <= 0 {
		nMax = 256
	}
	dMax = max(dMax, dMin)
	nMax = max(nMax, nMin)
	return
}

// Check reports unknown family names and impossible sizes.
func (o SimOptions) Check() error {
	if o.D < 0 || o.N < 0 {
		return fmt.Errorf("d and n must be ≥ 0 (0 = drawn), got d=%d n=%d", o.D, o.N)
	}
	if o.D > MaxDim {
		return fmt.Errorf("d must be ≤ %d (the task JSON limit), got %d", MaxDim, o.D)
	}
	if o.DMax > MaxDim {
		return fmt.Errorf("d_max must be ≤ %d (the task JSON limit), got %d", MaxDim, o.DMax)
	}
	if o.DMin < 0 || o.DMax < 0 || o.NMin < 0 || o.NMax < 0 {
		return fmt.Errorf("size ranges must be ≥ 0, got d∈[%d,%d] n∈[%d,%d]", o.DMin, o.DMax, o.NMin, o.NMax)
	}
	if o.DMax > 0 && o.DMin > o.DMax || o.NMax > 0 && o.NMin > o.NMax {
		return fmt.Errorf("empty size range d∈[%d,%d] n∈[%d,%d]", o.DMin, o.DMax, o.NMin, o.NMax)
	}
	if o.Prior != "" && !slices.Contains(PriorFamilies, o.Prior) {
		return fmt.Errorf("unknown prior %q (valid: %s)", o.Prior, strings.Join(PriorFamilies, ", "))
	}
	for i, l := range o.Likelihoods {
		if !slices.Contains(LikelihoodFamilies, l) {
			return fmt.Errorf("unknown likelihood %q (valid: %s)", l, strings.Join(LikelihoodFamilies, ", "))
		}
		if slices.Contains(o.Likelihoods[:i], l) {
			return fmt.Errorf("likelihood %q listed twice", l)
		}
	}
	if o.Design != "" && !slices.Contains(DesignFamilies, o.Design) {
		return fmt.Errorf("unknown design %q (valid: %s)", o.Design, strings.Join(DesignFamilies, ", "))
	}
	if o.KappaMax != 0 && !(o.KappaMax >= 1 && !math.IsInf(o.KappaMax, 1)) {
		return fmt.Errorf("kappa max must be a finite number ≥ 1, got %g", o.KappaMax)
	}
	return nil
}

// SampleDN draws (d, N): with probability 0.6 from the hard-biased
// distribution P(d,N) ∝ ((d−d_min+1)/(d_max−d_min+1))^1 · (N_min/N)^0.75,
// otherwise uniformly over the grid. A size fixed in o (> 0) overrides the
// drawn one.
func SampleDN(rng *rand.Rand, o SimOptions) (d, n int) {
	dMin, dMax, nMin, nMax := o.support()
	if rng.Float64() < simPHard {
		// The hard distribution factorises over d and N, so the two are
		// drawn independently by inverse CDF over their grids.
		span := float64(dMax - dMin + 1)
		d = dMin + invCDFIndex(rng, dMax-dMin+1, func(i int) float64 {
			return math.Pow(float64(i+1)/span, simAlphaD)
		})
		n = nMin + invCDFIndex(rng, nMax-nMin+1, func(i int) float64 {
			return math.Pow(float64(nMin)/float64(nMin+i), simAlphaN)
		})
	} else {
		d = dMin + rng.IntN(dMax-dMin+1)
		n = nMin + rng.IntN(nMax-nMin+1)
	}
	if o.D > 0 {
		d = o.D
	}
	if o.N > 0 {
		n = o.N
	}
	return d, n
}

// invCDFIndex draws i ∈ {0..k−1} with probability ∝ w(i).
func invCDFIndex(rng *rand.Rand, k int, w func(int) float64) int {
	var total float64
	for i := 0; i < k; i++ {
		total += w(i)
	}
	u := rng.Float64() * total
	for i := 0; i < k; i++ {
		u -= w(i)
		if u < 0 {
			return i
		}
	}
	return k - 1
}

// Simulate draws one task from the paper's data-generating process (App.
// D.2 with the facts sheet §8 constants): sizes, prior, z from the prior,
// site families, per-task likelihood parameters, a design matrix and the
// observations. The returned task carries TrueZ, an exact draw from its
// posterior. The same rng state gives the same task.
func Simulate(rng *rand.Rand, o SimOptions) (*Task, error) {
	return SimulateContext(context.Background(), rng, o, nil)
}

// Tick reports the progress of a long stage of the simulator: done of
// total units of the named stage (the rows of a full-rank prior's
// precision, the columns of a rotation, the rows of a design).
type Tick func(stage string, done, total int)

// SimulateContext is Simulate that looks at ctx through its O(d³) and
// O(N·d²) stages (each row or column of them) and reports their progress
// to tick (nil: none). A cancel returns ctx.Err() within one row or
// column of work.
func SimulateContext(ctx context.Context, rng *rand.Rand, o SimOptions, tick Tick) (*Task, error) {
	if err := o.Check(); err != nil {
		return nil, fmt.Errorf("simulate: %w", err)
	}
	d, n := SampleDN(rng, o)
	return simulateDN(simRun{ctx, tick}, rng, o, d, n)
}

// simRun carries a simulation's context and progress to its long stages.
type simRun struct {
	ctx  context.Context
	tick Tick
}

// step reports done of total units of stage and returns ctx.Err(): the
// long loops call it once per row or column.
func (r simRun) step(stage string, done, total int) error {
	if r.tick != nil {
		r.tick(stage, done, total)
	}
	return r.ctx.Err()
}

// SimulateBatch draws b tasks that share one (d, N), as a training
// micro-batch does (paper App. D.2); everything else is independent.
func SimulateBatch(rng *rand.Rand, o SimOptions, b int) ([]*Task, error) {
	if err := o.Check(); err != nil {
		return nil, fmt.Errorf("simulate: %w", err)
	}
	if b < 0 {
		return nil, fmt.Errorf("simulate: batch size must be ≥ 0, got %d", b)
	}
	d, n := SampleDN(rng, o)
	tasks := make([]*Task, b)
	for i := range tasks {
		var err error
		if tasks[i], err = simulateDN(simRun{ctx: context.Background()}, rng, o, d, n); err != nil {
			return nil, err
		}
	}
	return tasks, nil
}

func simulateDN(r simRun, rng *rand.Rand, o SimOptions, d, n int) (*Task, error) {
	prior, err := simPrior(r, rng, o.Prior, d)
	if err != nil {
		return nil, err
	}
	z := make([]float64, d)
	prior.Rand(rng, z)

	fams := simSiteFamilies(rng, o.Likelihoods, n)
	kappaMax := o.KappaMax
	if kappaMax == 0 {
		kappaMax = simKappaMax
	}
	design := o.Design
	if design == "" {
		design = drawDesignFamily(rng)
	}
	// Rows are drawn only for sites that use one; the vector gaussian
	// factor has no covariate.
	rows := 0
	var counts [5]int
	for _, f := range fams {
		counts[f]++
		if LikelihoodFamilies[f] != GaussianFamily {
			rows++
		}
	}
	x, err := simDesign(r, rng, design, d, rows, kappaMax)
	if err != nil {
		return nil, err
	}

	// Per-task parameters, shared by all sites of a family (facts §8);
	// drawn for every family so that the stream layout does not depend on
	// which families happen to be present.
	nz := simNoise{
		sigmaLin: simSigmaLin.draw(rng),
		sigmaVec: simSigmaVec.draw(rng),
		sigmaT:   simSigmaT.draw(rng),
		dfT:      simDFT.draw(rng),
	}
	factors := simFactors(rng, fams, counts, x, z, nz)
	return &Task{D: d, Prior: prior, Factors: factors, TrueZ: z}, nil
}

// simNoise holds the per-task noise parameters of the simulator.
type simNoise struct {
	sigmaLin, sigmaVec, sigmaT, dfT float64
}

// simFactors draws the observation of every site given the latent z: site
// i has family fams[i] (counts per family), the non-vector sites take
// their design rows from x in order.
func simFactors(rng *rand.Rand, fams []int, counts [5]int, x, z []float64, nz simNoise) []Likelihood {
	d := len(z)
	// One backing array per family keeps allocations per task constant.
	var (
		lin  = make([]LinGaussian, 0, counts[0])
		bern = make([]BernoulliLogit, 0, counts[1])
		bin  = make([]BinomialLogit, 0, counts[2])
		stu  = make([]LinStudentT, 0, counts[3])
		vec  = make([]Gaussian, 0, counts[4])
		vecY = make([]float64, counts[4]*d)
	)
	factors := make([]Likelihood, len(fams))
	row := 0
	for i, f := range fams {
		fam := LikelihoodFamilies[f]
		if fam == GaussianFamily {
			y := vecY[len(vec)*d : (len(vec)+1)*d : (len(vec)+1)*d]
			for j := range y {
				y[j] = z[j] + nz.sigmaVec*rng.NormFloat64()
			}
			vec = append(vec, Gaussian{Y: y, Sigma: nz.sigmaVec})
			factors[i] = &vec[len(vec)-1]
			continue
		}
		xr := x[row*d : (row+1)*d : (row+1)*d]
		row++
		eta := dot(xr, z)
		switch fam {
		case LinGaussianFamily:
			lin = append(lin, LinGaussian{X: xr, Y: eta + nz.sigmaLin*rng.NormFloat64(), Sigma: nz.sigmaLin})
			factors[i] = &lin[len(lin)-1]
		case BernoulliLogitFamily:
			y := 0.0
			if rng.Float64() < Sigmoid(eta) {
				y = 1
			}
			bern = append(bern, BernoulliLogit{X: xr, Y: y})
			factors[i] = &bern[len(bern)-1]
		case BinomialLogitFamily:
			bin = append(bin, simBinomial(rng, xr, eta))
			factors[i] = &bin[len(bin)-1]
		case LinStudentTFamily:
			stu = append(stu, LinStudentT{X: xr, Y: eta + nz.sigmaT*StudentT(rng, nz.dfT), Sigma: nz.sigmaT, DF: nz.dfT})
			factors[i] = &stu[len(stu)-1]
		}
	}
	return factors
}

// simBinomial draws a trial count and the successes at logit eta, one
// Bernoulli draw per trial (the facts sheet's stream layout).
func simBinomial(rng *rand.Rand, x []float64, eta float64) BinomialLogit {
	trials := simTrialsMin + rng.IntN(simTrialsMax-simTrialsMin+1)
	p := Sigmoid(eta)
	y := 0.0
	for range trials {
		if rng.Float64() < p {
			y++
		}
	}
	return BinomialLogit{X: x, Y: y, Trials: trials}
}

func uniform(rng *rand.Rand, a, b float64) float64 { return a + (b-a)*rng.Float64() }

// simPrior draws the prior family (uniform over the 4 unless fixed) and its
// parameters.
func simPrior(r simRun, rng *rand.Rand, family string, d int) (Prior, error) {
	if family == "" {
		family = PriorFamilies[rng.IntN(len(PriorFamilies))]
	}
	loc := make([]float64, d)
	for i := range loc {
		loc[i] = simLocScale * rng.NormFloat64()
	}
	logScales := func(u logUniform) []float64 {
		s := make([]float64, d)
		for i := range s {
			s[i] = u.draw(rng)
		}
		return s
	}
	switch family {
	case DiagGaussianFamily:
		return &DiagGaussian{Loc: loc, Scale: logScales(simScaleGauss)}, nil
	case DiagStudentTFamily:
		s := logScales(simScaleT)
		return &DiagStudentT{Loc: loc, Scale: s, DF: simDFPriorT.draw(rng)}, nil
	case DiagLaplaceFamily:
		return &DiagLaplace{Loc: loc, Scale: logScales(simScaleLaplace)}, nil
	default: // FullRankGaussianFamily; Check has rejected anything else
		return simFullRankPrior(r, rng, loc)
	}
}

// simFullRankPrior draws Λ = MMᵀ/d + ridge·I with M standard Gaussian
// times simPriorM.
func simFullRankPrior(r simRun, rng *rand.Rand, loc []float64) (Prior, error) {
	d := len(loc)
	m := make([]float64, d*d)
	for i := range m {
		m[i] = simPriorM * rng.NormFloat64()
	}
	prec := make([]float64, d*d)
	for i := 0; i < d; i++ {
		if err := r.step("prior precision", i, d); err != nil {
			return nil, err
		}
		for j := 0; j <= i; j++ {
			v := dot(m[i*d:(i+1)*d], m[j*d:(j+1)*d]) / float64(d)
			if i == j {
				v += simPriorRidge
			}
			prec[i*d+j], prec[j*d+i] = v, v
		}
	}
	// Λ ⪰ 0.5 I, so the factorisation cannot fail. Up to simFastMinD it
	// is posterior.Cholesky, whose rounding fixed the content (and hashes)
	// of the tasks drawn so far; above, the blocked one that looks at ctx.
	if d <= simFastMinD {
		chol, _ := posterior.Cholesky(prec, d, 0)
		return fullRankFromCholesky(loc, prec, chol), nil
	}
	chol := append([]float64(nil), prec...)
	if _, err := cholesky.Factor(r.ctx, chol, d); err != nil {
		return nil, err
	}
	return fullRankFromCholesky(loc, prec, chol), nil
}

// simSiteFamilies assigns a family index (into LikelihoodFamilies) to each
// of the n sites.
func simSiteFamilies(rng *rand.Rand, names []string, n int) []int {
	fams := make([]int, n)
	// pool holds the candidate family indices.
	var pool []int
	if len(names) == 0 {
		pool = []int{0, 1, 2, 3, 4}
	} else {
		for _, name := range names {
			pool = append(pool, slices.Index(LikelihoodFamilies, name))
		}
	}
	homogeneous := len(pool) == 1 || n <= 1 || (len(names) == 0 && rng.Float64() < simHomogP)
	if homogeneous {
		f := pool[rng.IntN(len(pool))]
		for i := range fams {
			fams[i] = f
		}
		return fams
	}
	kMax := min(len(pool), n)
	k := kMax
	if len(names) == 0 {
		// P(k) ∝ exp(−(k−2)) over k ∈ {2..kMax}.
		k = 2 + invCDFIndex(rng, kMax-1, func(i int) float64 { return math.Exp(-float64(i)) })
	}
	// k distinct families uniformly without replacement (partial shuffle).
	for i := 0; i < k; i++ {
		j := i + rng.IntN(len(pool)-i)
		pool[i], pool[j] = pool[j], pool[i]
	}
	chosen := pool[:k]
	var pi [5]float64
	var total float64
	for i := range chosen {
		pi[i] = Gamma(rng, simDirichlet)
		total += pi[i]
	}
	copy(fams, chosen)
	for s := k; s < n; s++ {
		u := rng.Float64() * total
		c := k - 1
		for i := 0; i < k; i++ {
			u -= pi[i]
			if u < 0 {
				c = i
				break
			}
		}
		fams[s] = chosen[c]
	}
	rng.Shuffle(n, func(i, j int) { fams[i], fams[j] = fams[j], fams[i] })
	return fams
}

func drawDesignFamily(rng *rand.Rand) string {
	u := rng.Float64()
	switch {
	case u < 0.7:
		return DesignIID
	case u < 0.8:
		return DesignDiagScale
	case u < 0.9:
		return DesignCorrelated
	default:
		return DesignStudentT
	}
}

// simFastMinD is the largest d whose correlated and student_t designs
// (and full-rank priors) are drawn as they always were. Above it, when
// there are fewer rows than d, the design is drawn through its row space
// (designRowSpace, O(rows²·d) instead of O(d³): at d = 4096, N = 256 about
// a second instead of 347 s), from the same distribution; tasks of such
// sizes could not be drawn in practice before, so no content hash of a
// task drawn so far changes.
const simFastMinD = 256

// simDesign returns rows×d design rows (row-major). Every family has
// E‖x‖² = 0.81: the base scale is 0.9/√d and the spectra sum to d.
func simDesign(r simRun, rng *rand.Rand, family string, d, rows int, kappaMax float64) ([]float64, error) {
	x := make([]float64, rows*d)
	base := simBaseScale / math.Sqrt(float64(d))
	if d == 1 || family == DesignIID {
		for i := range x {
			x[i] = base * rng.NormFloat64()
		}
		return x, nil
	}
	lambda := designSpectrum(rng, d, kappaMax)
	if family == DesignDiagScale {
		for r := 0; r < rows; r++ {
			for j := 0; j < d; j++ {
				x[r*d+j] = base * math.Sqrt(lambda[j]) * rng.NormFloat64()
			}
		}
		return x, nil
	}
	dfX := 0.0
	if d > simFastMinD && rows < d {
		if family == DesignStudentT {
			dfX = uniform(rng, 5, 12)
		}
		return designRowSpace(r, rng, x, base, lambda, dfX)
	}
	// correlated and student_t: x = base · Q diag(√λ) ε with Haar Q.
	a, err := haarOrthogonal(r, rng, d)
	if err != nil {
		return nil, err
	}
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			a[i*d+j] *= base * math.Sqrt(lambda[j])
		}
	}
	if family == DesignStudentT {
		dfX = uniform(rng, 5, 12)
	}
	eps := make([]float64, d)
	for row := 0; row < rows; row++ {
		if err := r.step("design rows", row, rows); err != nil {
			return nil, err
		}
		for j := range eps {
			eps[j] = rng.NormFloat64()
		}
		xr := x[row*d : (row+1)*d]
		w := rowWeight(rng, dfX)
		for i := 0; i < d; i++ {
			xr[i] = w * dot(a[i*d:(i+1)*d], eps)
		}
	}
	return x, nil
}

// rowWeight is a design row's scale: 1, or for multivariate-t rows
// (dfX > 0) √((ν−2)/χ²_ν), which makes them unit variance.
func rowWeight(rng *rand.Rand, dfX float64) float64 {
	if dfX == 0 {
		return 1
	}
	return math.Sqrt((dfX - 2) / ChiSquare(rng, dfX))
}

// designRowSpace fills the rows×d x (rows < d) with rows distributed as
// the Haar construction's, x = M Qᵀ with the rows of M base·w·√λ⊙ε, at
// O(rows²·d) cost. With Mᵀ = VR (Gram–Schmidt, V d×rows orthonormal),
// x = RᵀVᵀQᵀ = Rᵀ(QV)ᵀ, and QV for a Haar Q is a uniformly random
// orthonormal d×rows frame W, whatever V is: so x = RᵀWᵀ with W the
// Gram–Schmidt frame of a standard Gaussian d×rows matrix. Only the
// rows' joint law matters (xxᵀ = MMᵀ, row space uniformly oriented);
// the full rotation is never needed.
func designRowSpace(r simRun, rng *rand.Rand, x []float64, base float64, lambda []float64, dfX float64) ([]float64, error) {
	d := len(lambda)
	rows := len(x) / d
	m := make([]float64, rows*d) // the rows of M are the columns of Mᵀ
	for row := 0; row < rows; row++ {
		mr := m[row*d : (row+1)*d]
		for j := range mr {
			mr[j] = rng.NormFloat64()
		}
		w := rowWeight(rng, dfX)
		for j := range mr {
			mr[j] *= base * w * math.Sqrt(lambda[j])
		}
	}
	coef := make([]float64, rows*rows)
	if err := gramSchmidt(r, "design row space", m, d, rows, coef); err != nil {
		return nil, err
	}
	frame := make([]float64, rows*d)
	for i := range frame {
		frame[i] = rng.NormFloat64()
	}
	if err := gramSchmidt(r, "design frame", frame, d, rows, nil); err != nil {
		return nil, err
	}
	for row := 0; row < rows; row++ {
		if err := r.step("design rows", row, rows); err != nil {
			return nil, err
		}
		xr := x[row*d : (row+1)*d]
		for k := 0; k <= row; k++ { // R is upper triangular: (Rᵀ)_row,k = R_k,row
			axpy(coef[k*rows+row], frame[k*d:(k+1)*d], xr)
		}
	}
	return x, nil
}

// designSpectrum draws λ log-uniform in [κ^{-1/2}, κ^{1/2}] with
// log κ ~ U(0, log κ_max), rescaled to sum to d.
func designSpectrum(rng *rand.Rand, d int, kappaMax float64) []float64 {
	logK := uniform(rng, 0, math.Log(kappaMax))
	lambda := make([]float64, d)
	var sum float64
	for i := range lambda {
		lambda[i] = math.Exp(-0.5*logK + rng.Float64()*logK)
		sum += lambda[i]
	}
	for i := range lambda {
		lambda[i] *= float64(d) / sum
	}
	return lambda
}

// haarOrthogonal returns a d×d Haar-distributed orthogonal matrix
// (row-major): the Q of the QR factorisation of a standard Gaussian matrix
// with R's diagonal made positive. Gram–Schmidt on the columns yields
// exactly that Q (its R has a positive diagonal by construction).
func haarOrthogonal(r simRun, rng *rand.Rand, d int) ([]float64, error) {
	// Work on columns stored contiguously (col-major), transpose at the end.
	c := make([]float64, d*d)
	for i := range c {
		c[i] = rng.NormFloat64()
	}
	if err := gramSchmidt(r, "design rotation", c, d, d, nil); err != nil {
		return nil, err
	}
	q := make([]float64, d*d)
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			q[i*d+j] = c[j*d+i]
		}
	}
	return q, nil
}

// gramSchmidt orthonormalises the m contiguous length-d columns of c in
// place, each against the earlier ones twice (modified Gram–Schmidt, so
// the result is orthonormal to rounding even for larger d), looking at
// ctx before each column. When coef (m×m, row-major) is given, it
// receives the upper triangular R of c = QR: the projections summed over
// both passes above the diagonal, the norms on it.
func gramSchmidt(r simRun, stage string, c []float64, d, m int, coef []float64) error {
	for j := 0; j < m; j++ {
		if err := r.step(stage, j, m); err != nil {
			return err
		}
		v := c[j*d : (j+1)*d]
		for pass := 0; pass < 2; pass++ {
			for k := 0; k < j; k++ {
				q := c[k*d : (k+1)*d]
				p := dot(q, v)
				axpy(-p, q, v)
				if coef != nil {
					coef[k*m+j] += p
				}
			}
		}
		nrm := math.Sqrt(dot(v, v))
		if coef != nil {
			coef[j*m+j] = nrm
		}
		if nrm == 0 { // a column in the span of the earlier ones: R_jj = 0
			continue
		}
		for i := range v {
			v[i] /= nrm
		}
	}
	return nil
}
