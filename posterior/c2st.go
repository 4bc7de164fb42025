package posterior

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// C2ST, the classifier two-sample test, is the SBI benchmark's primary
// metric (Lopez-Paz & Oquab 2017; Lueckmann et al. 2021, sbibm): a
// classifier is trained to tell a method's draws from reference draws and
// its held-out accuracy is reported. 0.5 means indistinguishable; 1 means
// disjoint. The protocol follows sbibm's: equal numbers of draws per side
// (balanced classes), inputs z-scored with the reference's mean and
// standard deviation, an MLP with two hidden ReLU layers of 10·d units
// trained by Adam on the logistic loss, and the mean accuracy over
// stratified 5-fold cross-validation. The MLP is written here (no
// dependency); its epochs are capped so one test takes seconds, not
// minutes, at the default 2,000 draws per side.

// ErrC2STInput marks draw sets C2ST cannot compare.
var ErrC2STInput = errors.New("c2st: bad input")

// C2STOptions configure a C2ST; the zero value is sbibm's protocol at
// afin's sizes (see DefaultC2STOptions).
type C2STOptions struct {
	// MaxDraws caps the draws per side (0: 2000). Weighted sets are
	// resampled to this many draws; larger unweighted sets are
	// subsampled without replacement.
	MaxDraws int
	// Folds of the cross-validation (0: 5).
	Folds int
	// Hidden is the width of both hidden layers (0: 10·d, as sbibm).
	Hidden int
	// Epochs caps the passes over the training folds (0: 100); training
	// stops earlier when the loss has not improved by 1e-4 for 10 epochs
	// (scikit-learn's rule, which sbibm inherits).
	Epochs int
	// Seed seeds subsampling, folds, initialisation and minibatches.
	Seed uint64
}

// C2STResult is the outcome of a C2ST.
type C2STResult struct {
	// Accuracy is the mean held-out accuracy over folds.
	Accuracy float64 `json:"accuracy"`
	// Folds are the per-fold accuracies.
	Folds []float64 `json:"folds"`
	// N is the number of draws per side that were used.
	N int `json:"n"`
	// StdErr is the binomial standard error of Accuracy over the 2N
	// held-out predictions, √(a(1−a)/2N): the Monte Carlo error of the
	// test itself, ignoring the classifier's training variance.
	StdErr float64 `json:"std_err"`
}

func (o C2STOptions) withDefaults(d int) C2STOptions {
	if o.MaxDraws <= 0 {
		o.MaxDraws = 2000
	}
	if o.Folds <= 0 {
		o.Folds = 5
	}
	if o.Hidden <= 0 {
		o.Hidden = 10 * d
	}
	if o.Epochs <= 0 {
		o.Epochs = 100
	}
	return o
}

// C2ST trains classifiers to separate q's draws from ref's and returns
// their cross-validated accuracy.
func C2ST(q, ref *Draws, o C2STOptions) (C2STResult, error) {
	if q == nil || ref == nil || q.D != ref.D || q.D < 1 {
		return C2STResult{}, fmt.Errorf("%w: draw sets must share a dimension ≥ 1", ErrC2STInput)
	}
	o = o.withDefaults(q.D)
	rng := rand.New(rand.NewPCG(o.Seed, 0xc257))
	// A weighted set is resampled, so only unweighted sets bound n.
	n := o.MaxDraws
	for _, d := range []*Draws{q, ref} {
		if !d.Weighted() {
			n = min(n, d.Len())
		}
	}
	if n < 2*o.Folds {
		return C2STResult{}, fmt.Errorf("%w: %d draws per side, need at least %d", ErrC2STInput, n, 2*o.Folds)
	}
	a, b := balanced(q, rng, n), balanced(ref, rng, n)
	x, y, err := standardized(a, b)
	if err != nil {
		return C2STResult{}, err
	}
	fold := groupFolds(rng, x, q.D, n, o.Folds)
	res := C2STResult{N: n, Folds: make([]float64, o.Folds)}
	correct := 0
	for k := range o.Folds {
		var train, test []int
		for i, f := range fold {
			if f == k {
				test = append(test, i)
			} else {
				train = append(train, i)
			}
		}
		net := newMLP(q.D, o.Hidden, rng)
		net.fit(x, y, train, o.Epochs, rng)
		c := net.correct(x, y, test)
		correct += c
		res.Folds[k] = float64(c) / float64(len(test))
		res.Accuracy += res.Folds[k] / float64(o.Folds)
	}
	pooled := float64(correct) / float64(2*n)
	res.StdErr = math.Sqrt(pooled * (1 - pooled) / float64(2*n))
	return res, nil
}

// balanced returns exactly n unweighted rows of d: a weighted set is
// resampled by its weights, an unweighted one subsampled without
// replacement (so no row appears twice, which would leak between folds).
func balanced(d *Draws, rng *rand.Rand, n int) *Draws {
	if d.Weighted() {
		return d.Resample(rng, n)
	}
	perm := rng.Perm(d.Len())[:n]
	out := &Draws{D: d.D, Z: make([]float64, 0, n*d.D)}
	for _, i := range perm {
		out.Z = append(out.Z, d.Row(i)...)
	}
	return out
}

// standardized stacks a (label 1) and ref (label 0), z-scored with ref's
// per-coordinate mean and standard deviation, as sbibm does.
func standardized(a, ref *Draws) (x []float64, y []float64, err error) {
	d, n := ref.D, ref.Len()
	mean, cov := ref.Mean(), ref.Cov()
	sd := make([]float64, d)
	for j := range d {
		sd[j] = math.Sqrt(cov[j*d+j])
		if !(sd[j] > 0) || math.IsInf(sd[j], 0) {
			return nil, nil, fmt.Errorf("%w: reference coordinate %d has standard deviation %v", ErrC2STInput, j+1, sd[j])
		}
	}
	x = make([]float64, 0, 2*n*d)
	y = make([]float64, 0, 2*n)
	for s, set := range []*Draws{ref, a} {
		for i := range n {
			for j, v := range set.Row(i) {
				x = append(x, (v-mean[j])/sd[j])
			}
			y = append(y, float64(s))
		}
	}
	for _, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, nil, fmt.Errorf("%w: a draw is not finite", ErrC2STInput)
		}
	}
	return x, y, nil
}

// groupFolds assigns each of the 2n rows of x (n per class, class 0
// first) to one of k folds, both classes spread evenly, and every copy of
// a repeated row in its class's same fold. Resampled weighted draws and
// MCMC chains with rejections repeat rows; were the copies split across
// folds, the classifier would recognise memorised points in the test fold
// and report a difference the distributions do not have.
func groupFolds(rng *rand.Rand, x []float64, d, n, k int) []int {
	fold := make([]int, 2*n)
	for c := range 2 {
		group := map[string][]int{}
		var order []string
		for i := range n {
			row := c*n + i
			key := fmt.Sprint(x[row*d : (row+1)*d])
			if _, ok := group[key]; !ok {
				order = append(order, key)
			}
			group[key] = append(group[key], row)
		}
		// Shuffled groups, largest first, each to the currently smallest
		// fold: folds stay balanced even with heavy repetition.
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		slices.SortStableFunc(order, func(a, b string) int { return len(group[b]) - len(group[a]) })
		size := make([]int, k)
		for _, key := range order {
			f := slices.Index(size, slices.Min(size))
			for _, row := range group[key] {
				fold[row] = f
			}
			size[f] += len(group[key])
		}
	}
	return fold
}
