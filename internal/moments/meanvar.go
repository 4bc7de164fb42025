package moments

import "math"

// MeanVar returns the mean of x and its variance with divisor n−ddof:
// ddof = 1 for the unbiased sample variance (R's var), ddof = 0 for the
// population variance. The variance is the plain two-pass Σ(x−x̄)²/(n−ddof),
// 0 when n ≤ ddof; the mean of an empty x is NaN.
//
// gonum's stat.MeanVariance subtracts a compensation term (Σ(x−x̄))²/n
// from the sum of squares, which changes results in the last bits; afin's
// golden values (R̂, ESS, dataset standardisation and so the reference
// cache keys of the UCI tasks) were fixed with the plain form, so it stays.
func MeanVar(x []float64, ddof int) (mean, variance float64) {
	n := len(x)
	for _, v := range x {
		mean += v
	}
	mean /= float64(n)
	if n <= ddof {
		return mean, 0
	}
	var ss float64
	for _, v := range x {
		ss += (v - mean) * (v - mean)
	}
	return mean, ss / float64(n-ddof)
}

// MeanSD is MeanVar with the standard deviation in place of the variance.
func MeanSD(x []float64, ddof int) (mean, sd float64) {
	mean, v := MeanVar(x, ddof)
	return mean, math.Sqrt(v)
}

// SampleMeanSD is the mean and the n−1 standard deviation (R's sd), with a
// NaN sd for fewer than two values, where R's sd is NA.
func SampleMeanSD(x []float64) (mean, sd float64) {
	mean, sd = MeanSD(x, 1)
	if len(x) < 2 {
		sd = math.NaN()
	}
	return mean, sd
}
