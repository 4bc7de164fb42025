// Package reference produces the ground-truth posteriors of the
// benchmark and caches them on disk.
//
// For conjugate tasks (Gaussian prior, lin_gaussian / gaussian factors)
// the reference is the exact posterior (Kind "exact"), with a subsample
// drawn from that Gaussian for SW2. For every other task it is a long
// NUTS run (Kind "nuts"): its mean and covariance are accumulated over
// all draws by a streaming (Welford/Chan) estimator (internal/moments), so 10⁶ draws never
// sit in memory, and an evenly thinned subsample (5·10⁴ by default) is
// kept for sliced-Wasserstein distances. A NUTS reference is cached only
// if it passes the convergence check (rank-normalised split-R̂ < 1.01
// and bulk ESS above a floor, both on the thinned draws, which
// under-states the ESS of the full run).
//
// The cache key is the SHA-256 of the canonical task JSON
// (factor.MarshalTask, without the name and true z, which do not change
// the posterior) together with every setting that changes the
// result; files are written atomically (temporary file, then rename).
package reference
