// Package posterior is afin's common currency for comparing methods: sets
// of draws in R^d with optional normalised weights, their moments,
// self-normalised importance sampling, the metrics M1, M2 and SW2, the
// importance-weight diagnostics (PSIS Pareto-k̂, maximum weight, entropy
// ratio, Kish ESS) and MCMC diagnostics (split-R̂, bulk and tail ESS).
package posterior
