// Package f64vec holds float64 vector kernels for evaluating log
// densities of a task and their gradients: the linear predictors of every
// site at one point (a transposed design times z), the per-site sums of
// the logistic and Student-t families with their log1p terms kept as a
// product, so one point costs one log per lane instead of one per site,
// and, for the gradient, the same sums with each site's weight ∂ℓ/∂η
// (LogisticGrad, StudentTGrad: the value's lanes bit for bit, so a value
// computed with or without its gradient is the same) and the transposed
// design times those weights (AddMatVec).
//
// # Kernels
//
// One implementation serves every entry point, chosen at start-up from
// the CPU's features (golang.org/x/sys/cpu), the way internal/gemm
// chooses its own:
//
//	avx2     amd64 with AVX2 and FMA (x86-64-v3): f64vec_amd64.s, four
//	         sites per ymm register
//	generic  anything else, and the purego build tag: portable Go with
//	         the same four-lane layout and the same exp polynomial
//
// Use forces a kernel (the tests run every kernel this CPU has against
// math.Exp and against the scalar sums); Kernel names the one in use.
// The generic kernels use math.FMA wherever the assembly fuses, so every
// kernel but StudentT's (VRCPPS, below) gives the same bits, which the
// tests assert. That makes them slow where FMA is not an instruction;
// Fast says whether the kernel in use is worth calling at all, and
// factor.Packed.LogDensities falls back to scalar code when it is not.
// On AVX2 (BenchmarkKernels, AMD EPYC): exp 1.7–1.9 ns per value, the
// bernoulli sums 1.8–2.0 ns per site, Student-t 1.0 ns; generic 16, 21
// and 4.4 ns. With the gradient weights: bernoulli 1.7–2.0 ns per site
// (one exact division more; eight sites per pass, against 2.1–2.4 with
// four), Student-t 1.0 ns, and
// AddMatVec at d = 4 0.34 ns per site (four rows per pass); generic 17,
// 4.6 and 2.4 ns.
//
// # The exponential
//
// exp(−|x|) is 2^k·p(r) with k = round(−|x|·log₂e), r = −|x| − k·ln2 in
// two FMA steps (ln2 split in a high and a low part) and p the degree-13
// Taylor polynomial of exp on |r| ≤ ln2/2 (truncation below 4e-18
// relative). 2^k is built in the exponent field in two halves, so that
// results below 2⁻¹⁰²² round once into the subnormals; |x| is clamped at
// 750, where the result is 0. TestExpNegAbs measures the error against
// math.Exp over [−746, 0] and asserts at most 2 ulps.
//
// # Products of logs
//
// The site kernels accumulate, in four lanes, Π u over the sites of a
// lane, renormalised to [1, 2) after every step with the exponent moved
// into an integer sum (exact, and the product can never overflow), plus
// the rounding error of each u = fl(1+t) divided by u. Acc.LogProd turns
// the lanes into Σ log u. The reciprocal of u is only needed for that
// correction, of size at most 2⁻⁵³, so the AVX2 kernels take it from the
// 12-bit VRCPPS approximation: its error is below 2⁻⁶⁴ per site.
package f64vec
