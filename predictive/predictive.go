// Package predictive scores a posterior by its posterior predictive on
// held-out binary labels: p(y=1 | x) = E_q[σ(xᵀz)] over a method's draws
// (weighted where the draws carry SNIS weights), and the accuracy,
// negative log-likelihood and ROC AUC of those probabilities, as the
// paper's OpenML comparison (App. E.6) computes them.
package predictive

import (
	"fmt"
	"math"
	"slices"

	"github.com/afin-bench/afin/factor"
	"github.com/afin-bench/afin/posterior"
)

// Probabilities returns p_i = Σ_s w_s σ(x_iᵀ z_s) for every row x_i, with
// w_s the draws' normalised weights, or 1/S for unweighted draws.
func Probabilities(d *posterior.Draws, x [][]float64) ([]float64, error) {
	s := d.Len()
	if s == 0 {
		return nil, fmt.Errorf("predictive: no draws")
	}
	if d.Weighted() && len(d.W) != s {
		return nil, fmt.Errorf("predictive: %d weights for %d draws", len(d.W), s)
	}
	p := make([]float64, len(x))
	for i, row := range x {
		if len(row) != d.D {
			return nil, fmt.Errorf("predictive: row %d has %d columns, draws have d = %d", i, len(row), d.D)
		}
		var sum float64
		for k := range s {
			z := d.Row(k)
			var eta float64
			for j, v := range row {
				eta += v * z[j]
			}
			w := 1 / float64(s)
			if d.Weighted() {
				w = d.W[k]
			}
			sum += w * factor.Sigmoid(eta)
		}
		p[i] = sum
	}
	return p, nil
}

// Accuracy is the fraction of rows whose predicted label, 1 when p ≥ 0.5,
// equals y.
func Accuracy(p, y []float64) float64 {
	var hit int
	for i, v := range p {
		label := 0.0
		if v >= 0.5 {
			label = 1
		}
		if label == y[i] {
			hit++
		}
	}
	return float64(hit) / float64(len(p))
}

// ClampP bounds probabilities in NLL to [ClampP, 1−ClampP], as the
// authors' code does, so one confident miss costs at most −log 1e-6.
const ClampP = 1e-6

// NLL is the mean binary cross-entropy −[y log p + (1−y) log(1−p)].
func NLL(p, y []float64) float64 {
	var sum float64
	for i, v := range p {
		v = min(max(v, ClampP), 1-ClampP)
		if y[i] == 1 {
			sum -= math.Log(v)
		} else {
			sum -= math.Log1p(-v)
		}
	}
	return sum / float64(len(p))
}

// AUC is the area under the ROC curve of scores p for labels y: the
// probability that a random positive scores above a random negative,
// ties counting one half (the Mann–Whitney statistic over mid-ranks).
// NaN when a class is absent.
func AUC(p, y []float64) float64 {
	idx := make([]int, len(p))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int {
		switch {
		case p[a] < p[b]:
			return -1
		case p[a] > p[b]:
			return 1
		}
		return 0
	})
	var pos, neg, rankSum float64
	for i := 0; i < len(idx); {
		j := i
		for j < len(idx) && p[idx[j]] == p[idx[i]] {
			j++
		}
		mid := float64(i+j+1) / 2 // mean of the 1-based ranks i+1..j
		for _, k := range idx[i:j] {
			if y[k] == 1 {
				pos++
				rankSum += mid
			} else {
				neg++
			}
		}
		i = j
	}
	if pos == 0 || neg == 0 {
		return math.NaN()
	}
	return (rankSum - pos*(pos+1)/2) / (pos * neg)
}

// ESSRatio is Kish's effective sample size of the weights, 1/Σw², over
// the number of draws; 1 for unweighted draws.
func ESSRatio(d *posterior.Draws) float64 {
	if !d.Weighted() {
		return 1
	}
	var ss float64
	for _, w := range d.W {
		ss += w * w
	}
	return 1 / ss / float64(len(d.W))
}

// Scores are the metrics of one split.
type Scores struct {
	Accuracy, NLL, AUC float64
}

// Score computes the three metrics of draws d on rows x with labels y.
func Score(d *posterior.Draws, x [][]float64, y []float64) (Scores, error) {
	if len(x) != len(y) || len(x) == 0 {
		return Scores{}, fmt.Errorf("predictive: %d rows, %d labels", len(x), len(y))
	}
	for i, v := range y {
		if v != 0 && v != 1 {
			return Scores{}, fmt.Errorf("predictive: label %d is %g, want 0 or 1", i, v)
		}
	}
	p, err := Probabilities(d, x)
	if err != nil {
		return Scores{}, err
	}
	return Scores{Accuracy: Accuracy(p, y), NLL: NLL(p, y), AUC: AUC(p, y)}, nil
}
