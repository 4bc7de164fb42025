package factor

import "math"

// Family names exactly as they appear in task JSON (the paper's names).
const (
	DiagGaussianFamily     = "diag_gaussian"
	FullRankGaussianFamily = "fullrank_gaussian"
	DiagLaplaceFamily      = "diag_laplace"
	DiagStudentTFamily     = "diag_student_t"

	GaussianFamily       = "gaussian"
	LinGaussianFamily    = "lin_gaussian"
	BernoulliLogitFamily = "bernoulli_logit"
	BinomialLogitFamily  = "binomial_logit"
	LinStudentTFamily    = "lin_student_t"
)

// PriorFamilies lists the prior families in the order of the paper's
// family IDs (facts sheet §0).
var PriorFamilies = []string{DiagGaussianFamily, FullRankGaussianFamily, DiagStudentTFamily, DiagLaplaceFamily}

// LikelihoodFamilies lists the likelihood families in the order of the
// paper's family IDs (facts sheet §0, translated to the paper's names).
var LikelihoodFamilies = []string{LinGaussianFamily, BernoulliLogitFamily, BinomialLogitFamily, LinStudentTFamily, GaussianFamily}

const (
	log2Pi = 1.8378770664093453 // log(2π)
	logPi  = 1.1447298858494002 // log(π)
)

// Softplus returns log(1+exp(x)) without overflow for large |x|.
func Softplus(x float64) float64 {
	if x > 0 {
		return x + math.Log1p(math.Exp(-x))
	}
	return math.Log1p(math.Exp(x))
}

// Sigmoid returns 1/(1+exp(-x)) without overflow for large |x|.
func Sigmoid(x float64) float64 {
	if x >= 0 {
		return 1 / (1 + math.Exp(-x))
	}
	e := math.Exp(x)
	return e / (1 + e)
}

func dot(x, z []float64) float64 {
	var s float64
	for i, v := range x {
		s += v * z[i]
	}
	return s
}

func axpy(a float64, x, y []float64) {
	for i, v := range x {
		y[i] += a * v
	}
}

// studentTLogNorm is the log normaliser of a scaled Student-t density:
// lgamma((ν+1)/2) − lgamma(ν/2) − ½log(νπ) − log σ.
func studentTLogNorm(df, scale float64) float64 {
	a, _ := math.Lgamma((df + 1) / 2)
	b, _ := math.Lgamma(df / 2)
	return a - b - 0.5*(math.Log(df)+logPi) - math.Log(scale)
}
