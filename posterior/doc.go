// Package posterior is afin's common currency for comparing methods: sets
// of draws in R^d with optional normalised weights, their moments,
// self-normalised importance sampling, the metrics M1, M2 and SW2, the
// importance-weight diagnostics (PSIS Pareto-k̂, maximum weight, entropy
// ratio, Kish ESS) and MCMC diagnostics (split-R̂, bulk and tail ESS).
//
// Conventions, following the paper's App. D.3 and DESIGN.md "Metrics":
//
//   - Unweighted covariances use the n−1 divisor, weighted ones Σ w̄(z−μ)(z−μ)ᵀ
//     with no correction. Zero-weight draws are ignored everywhere (they may
//     hold NaN when SNIS killed them).
//   - SW2 uses R = 128 seeded random unit directions and, per direction, the
//     exact L² distance between the two (weighted) empirical quantile
//     functions; no resampling and no truncation to equal sizes, unless
//     asked for with SW2Options.Resample. A set of 2¹⁸ draws or more, four
//     times the other's, is binned instead of sorted, with a proven bound
//     holding each direction's W2² within 10⁻⁴ of the exact value (so SW2
//     within 5·10⁻⁵); a direction the bound does not hold is sorted.
//     SW2LowerBound bounds SW2 from below by the sets' first two moments
//     (Gelbrich's bound per direction, less that tolerance), cheap enough
//     to rule out fits an oracle selection need not score.
//   - Pareto k̂ follows PSIS and the R package loo (tail ⌈min(0.2S, 3√S)⌉,
//     Zhang–Stephens fit, weakly informative prior); testdata holds golden
//     values from loo 2.5.1. The entropy ratio is H(w̄)/log S ∈ [0, 1].
//   - R̂ and ESS follow Vehtari et al. (2021) as implemented in the R
//     package posterior (golden values from posterior 1.4.0 in testdata).
//
// Functions returning float64 signal impossible input (mismatched
// dimensions, too few draws) with NaN, and an untrustworthy Pareto fit with
// +Inf, as loo does; encoding/json rejects both, so callers writing JSON
// must check.
package posterior
