// Package vi holds the variational-inference machinery of the baselines:
// an optimisation loop (Adam, from internal/optim) that snapshots the
// variational parameters at every budget of a step ladder (so one run
// serves all budgets), the paper's learning-rate sweep with ELBO or oracle
// selection, and full-rank Gaussian VI (FRVI). The Gaussian itself and
// the SNIS refinement (FRVI+SNIS) live in package posterior, shared with
// AFIN.
//
// The ELBO gradient is the reparameterised one, built by hand from the
// task's analytic log-density gradient (factor.Task.LogDensityGrad): no
// second density implementation and no autodiff. Flow-based VI (package
// baselines/flows) reuses Optimize, LRGrid and Sweep here through the
// Approx interface.
//
// # Protocols and convergence
//
// RunFRVI (and flows.Fit) run under a Protocol. ProtocolPractitioner, the
// default, is what a careful practitioner would do: start at the Laplace
// approximation (Laplace: the mode by gonum's BFGS with the analytic
// gradient, polished by Newton steps, the Hessian by differences of the
// gradient at the posterior's own scale), fit in that Gaussian's
// coordinates (Whitened) with a log-scale diagonal, so a step is a
// fraction of the posterior's width in every direction, and sweep
// PractitionerLRs. ProtocolPaper reproduces the paper: prior-scale start
// in z's units, PaperLRs, best rate per budget. Given a lower bound on
// the score (SweepBounded), the sweep scores fits in the order of their
// bounds and skips those that could not win, so an oracle selection
// scoring 10⁷ draws per fit pays only for the contenders.
//
// Under either, Assess gives each chosen fit a Convergence: not converged,
// with the reason in words, when the chosen rate is an end of the sweep
// and beats its neighbour, when the ELBO still rose over the last fifth of
// the steps, when the mean gradient there stands out of its noise, or when
// defensive importance sampling (q mixed with a Student-t of q's moments)
// moves a mean or sd beyond what a 4000-draw answer could hide.
package vi
