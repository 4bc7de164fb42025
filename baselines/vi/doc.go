// Package vi holds the variational-inference machinery of the baselines:
// an Adam optimiser, an optimisation loop that snapshots the variational
// parameters at every budget of a step ladder (so one run serves all
// budgets), the paper's learning-rate sweep with ELBO or oracle
// selection, and full-rank Gaussian VI (FRVI) with an optional
// self-normalised importance-sampling refinement (FRVI+SNIS).
//
// The ELBO gradient is the reparameterised one, built by hand from the
// task's analytic log-density gradient (factor.Task.LogDensityGrad): no
// second density implementation and no autodiff. Flow-based VI (package
// baselines/flows) reuses Adam, Optimize, LRGrid, Sweep and SNIS here
// through the Approx interface.
package vi
