// Package flows is flow-based variational inference, the paper's IAF, MAF
// and NSF baselines (Section 5.4): a normalising flow q is fitted to one
// task's posterior by maximising the ELBO with the reparameterisation
// gradient, under the same protocols as FRVI (package baselines/vi: Adam,
// a learning-rate sweep, budget-ladder snapshots, a convergence verdict per
// budget; vi.ProtocolPaper is the paper's 7-rate sweep 1e-6..1e-2 from the
// prior).
//
// # Families
//
// Every flow maps u ~ N(0, I_d) through Layers autoregressive transforms
// whose MADE conditioners (Germain et al. 2015; tanh, Depth hidden layers of
// width Hidden) alternate between the natural and the reversed coordinate
// order (the reversal permutation between layers), then through an affine
// layer z = m + L·y with L lower triangular:
//
//   - IAF (Kingma et al. 2016): y_i = u_i·exp(α_i(u_<i)) + μ_i(u_<i).
//     Sampling and log q of a sample are one pass per layer.
//   - MAF (Papamakarios et al. 2017): the density direction is the
//     parallel one, u_i = (y_i − μ_i(y_<i))·exp(−α_i(y_<i)); sampling is
//     sequential, d conditioner passes per layer, and its gradient goes
//     through that fixed point by implicit differentiation (a Neumann
//     series that is exact after d backward passes; see mafLayer).
//   - NSF (Durkan et al. 2019): y_i = RQS(u_i; θ_i(u_<i)), monotone
//     rational-quadratic splines with K bins on [−B, B] and identity
//     (linear) tails, in the IAF direction so the ELBO needs one pass.
//
// The log-scales α are bounded smoothly (3·tanh(r/3)) so that the largest
// learning rates of the sweep cannot overflow exp(α). The conditioners'
// output layers start at zero (and the spline derivatives at 1), so every
// transform starts as the identity, and the full-rank Gaussian is the
// special case "all transforms at identity". New returns exactly the base
// N(0, I). Under the practitioner protocol Fit optimises the flow in the
// coordinates of the Laplace approximation (where N(0, I) is that
// Gaussian) and folds the Laplace affine map into the final layer of
// every snapshot; under the paper's it puts the final layer at the prior's
// Gaussian moments, FRVI's paper start.
//
// Defaults (DefaultArch): 4 transforms, MADE 2×32, 8 bins on [−5, 5], 4
// Monte Carlo draws per step in antithetic pairs. Width 32 exceeds d − 1
// for every task of the paper (d ≤ 16, UCI d ≤ 14), so each conditioning
// set gets hidden units, and it keeps a 10⁴-step run to seconds. Wider
// did not help where measured: on the d = 2 skewed posterior of the tests
// (lr 1e-3, 10⁴ steps) widths 16/32/64 gave SW2 0.068/0.070/0.074 (IAF)
// and 0.065/0.066/0.066 (NSF) at 0.6/1.8/6.1 s (IAF) per run.
//
// # Why hand-written gradients in float64, not GoMLX
//
// The target's gradient ∇z log p̃ comes from factor.Task.LogDensityGrad
// (the one density implementation); the flow's own derivatives are
// hand-written reverse mode in plain Go, checked against finite differences
// in the tests. The alternative, GoMLX autodiff of the flow with ∇z log p̃
// fed in through the surrogate Σ stop_grad(g)·z, needs two graph executions
// per step (z first, so Go can evaluate g at z). Measured side by side in
// one run (BenchmarkGoMLXIAFStep vs BenchmarkStep/iaf/d8_N64, default IAF,
// d = 8, pure Go backend, a loaded 2-core machine): GoMLX 1.8–2.7 ms per
// step for the two executions alone, the hand-written step 0.11–0.21 ms
// including the target gradient and Adam, i.e. 10–20× faster. At d ≤ 16
// the per-execution overhead dominates the arithmetic.
//
// # Using it
//
// Fit runs the sweep and returns, per budget, the chosen *Snapshot (a
// vi.Approx: draw with vi.Draw, refine with posterior.SNISOf), with the
// optimisation seconds of its run up to that budget; Result.Seconds is the
// whole sweep, Result.Convergence the verdict per budget.
// A Flow's Sample/Transform give draws with their exact log q, and
// LogProb/Inverse evaluate q anywhere (sequential for IAF and NSF).
package flows
