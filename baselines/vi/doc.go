// Package vi holds the variational-inference machinery of the baselines:
// an Adam optimiser, an optimisation loop that snapshots the variational
// parameters at every budget of a step ladder (so one run serves all
// budgets), the paper's learning-rate sweep with ELBO or oracle
// selection, and full-rank Gaussian VI (FRVI). The Gaussian itself and
// the SNIS refinement (FRVI+SNIS) live in package posterior, shared with
// AFIN.
//
// The ELBO gradient is the reparameterised one, built by hand from the
// task's analytic log-density gradient (factor.Task.LogDensityGrad): no
// second density implementation and no autodiff. Flow-based VI (package
// baselines/flows) reuses Adam, Optimize, LRGrid and Sweep here through the
// Approx interface.
package vi
