// Package nuts is a Go-native No-U-Turn sampler: multinomial trajectory
// sampling with the generalised U-turn criterion checked within and
// across subtrees, a maximum tree depth (10 by default), divergence
// detection, dual-averaging step-size adaptation and Stan's windowed
// mass-matrix adaptation (diagonal by default, dense as an option).
//
// The algorithm follows Betancourt (2017, "A Conceptual Introduction to
// Hamiltonian Monte Carlo") and Stan's base_nuts as documented in the Stan
// reference manual, so that ESS per gradient matches Stan's. Several
// chains run concurrently, each on its own goroutine with its own PCG
// stream. The target is anything with an allocation-free
// LogDensityGrad(z, grad) method, in practice *factor.Task; the sampler
// itself allocates nothing per leapfrog step or tree node.
//
// Files: sampler.go (configuration, chains, results), tree.go (one NUTS
// transition), adaptation.go (dual averaging, windows, variance
// estimators), metric.go (Euclidean metrics).
package nuts
