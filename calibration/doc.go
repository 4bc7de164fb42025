// Package calibration checks amortised and sampling posteriors across a
// simulator rather than on one task: simulation-based calibration (SBC;
// Talts et al. 2018) ranks of each true coordinate and of two test
// quantities (the target's log density and a random projection) among a
// method's posterior draws, the rank ECDF with simultaneous 95% bands
// (Säilynoja, Bürkner & Vehtari 2022, simulation-based adjustment), a
// pass/fail per group of quantities, expected-coverage curves, and
// posterior contraction and z-scores (Schad, Betancourt & Vasishth 2021).
//
// Ranks are fractional and randomised: with r of L draws below the true
// value, u = (r + U)/(L + 1), U ~ Uniform(0, 1), which is exactly
// Uniform(0, 1) when the draws are exact and independent, so the bands of
// the continuous uniform ECDF apply at any evaluation grid and ties need no
// special case. Weighted draws are resampled to L draws first; more than L
// unweighted draws are thinned to L evenly spaced ones (which also thins
// an MCMC chain).
package calibration
