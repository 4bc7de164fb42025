// Package factor holds afin's typed-factor models: a latent vector z in R^d
// with one prior factor and N likelihood factors, each of a named family
// from the AFIN paper (priors diag_gaussian, fullrank_gaussian,
// diag_laplace, diag_student_t; likelihoods gaussian, lin_gaussian,
// bernoulli_logit, binomial_logit, lin_student_t).
//
// Every method in afin (NUTS, VI, SNIS, the metrics) reads the target
// density through this package, so it is the only float64 implementation of
// the densities in the project. Each family is one type with plain methods,
// in the style of gonum's stat/distuv: LogProb is the normalised log
// density, LogKernelGrad the log density without its z-independent constant
// together with its analytic gradient, and LogNormalizer that constant.
//
// Beside the densities the package holds task JSON reading, writing and
// validation (ParseTask, MarshalTask, Task.Validate: every violation names
// its JSON path, the rule and the value), the paper's simulator (Simulate,
// SimulateBatch, SampleDN: App. D.2 with the facts-sheet constants) and the
// closed-form posterior of conjugate tasks (ExactPosterior).
//
// Numerical choices: logistic terms use softplus written as
// max(η,0)+log1p(exp(-|η|)) so |xᵀz| of 1e3 neither overflows nor loses
// the linear part; Student-t terms use log1p.
//
// Task.Packed flattens a task for repeated evaluation: LogDensity and
// LogDensityGrad for NUTS and VI, and LogDensities, log p̃ at a block of
// points for SNIS (10⁷ proposals in the paper), on internal/f64vec's
// vector kernels (AVX2: about 2.5 ns per logistic site against 20 for
// LogDensity, BenchmarkLogDensities).
package factor
