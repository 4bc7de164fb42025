// Package streams names afin's random streams. Every random draw in the
// module comes from a PCG generator keyed by (seed, stream); two uses of
// one seed stay independent exactly when their stream constants differ,
// so the constants live here, side by side, where a collision is visible
// and a reader can tell which draws a seed controls.
//
// The values are frozen: changing one changes published numbers (the
// smoke accuracy baseline, cached references). New uses get new values.
//
// Seeds, as opposed to streams, are derived by hashing names in package
// bench: a unit's method seed is bench.UnitSeed(setting, seed, method,
// variant) and a simulated task's generator is keyed by a hash of its
// setting, so the same unit reproduces in every process and shard.
package streams

import "math/rand/v2"

// Stream is the second PCG word of one purpose's generator.
type Stream uint64

// New returns the generator of stream s under seed.
func New(seed uint64, s Stream) *rand.Rand {
	return rand.New(rand.NewPCG(seed, uint64(s)))
}

// At is the i-th member of a family of streams (one per point of a budget
// ladder): s + i.
func (s Stream) At(i int) Stream { return s + Stream(i) }

// Streams of the methods layer (package methods), per unit seed.
const (
	// AFINLadder: draws (afin) or proposals (afin-snis) of AFIN at ladder
	// point i is AFINLadder.At(i).
	AFINLadder Stream = 0
	// 0x57a2 was the AFIN+SNIS proposal star's own stream; the star is now
	// the largest ladder point's proposals. Not to be reused.
	// AFINWarmup: the untimed pass that compiles a flow decoder's graph.
	AFINWarmup Stream = 0xa3f0
	// VIDraws: draws from a fitted VI approximation (FRVI, flows), also
	// the draws an oracle selection scores.
	VIDraws Stream = 0xd4a5
	// FlowOracleDraws: the draws by which a flow snapshot is scored
	// against the reference in oracle selection.
	FlowOracleDraws Stream = 0x5c0
	// FRVISNISLadder: FRVI+SNIS proposals at ladder point i.
	FRVISNISLadder Stream = 0x5515
	// ELBO: the Monte Carlo ELBO estimate of a fitted approximation, in
	// selection and in diagnostics (also vi.NegELBOScore's stream).
	ELBO Stream = 0xe1b0
	// ExactDraws: draws from an exact conjugate posterior.
	ExactDraws Stream = 0xe7ac
	// AFINFitCheck: the draws of q and the Student-t half of the
	// defensive mixture by which an AFIN answer measures its own fit,
	// under a seed hashed from the answer (methods' fitRNG), not the
	// unit's, so the verdict is the same at every seed. Separate from the
	// answer's own stream, so the check leaves the answer's draws
	// unchanged.
	AFINFitCheck Stream = 0xaf1c0
)

// NUTSLadderSeed is the NUTS seed of ladder point i of a unit: each point
// is an independent run, and nuts.Sample gives chain c the stream c+1, so
// the seed itself moves by the 64-bit golden ratio per point.
func NUTSLadderSeed(seed uint64, i int) uint64 {
	return seed + uint64(i)*0x9e3779b97f4a7c15
}

// ExactReference: the subsample of an exact (conjugate) reference.
const ExactReference Stream = 0xe8ac7

// Streams of package afin's held-out evaluations.
const (
	// HeldOutTasks: the held-out conjugate tasks that watch training; the
	// seed is the training seed xor HeldOutSeedMask.
	HeldOutTasks    Stream = 77
	HeldOutSeedMask uint64 = 0xe7a1
	// HeldOutFlowBase: the fixed base draws of a flow decoder's held-out
	// mean, under seed 1 (so the evaluation is deterministic).
	HeldOutFlowBase Stream = 2
	// EvaluateTasks and EvaluateProposals: afin.EvaluateConjugate.
	EvaluateTasks     Stream = 0xc0
	EvaluateProposals Stream = 0xc1
)

// Streams of package baselines/vi (FRVI, the learning-rate sweep and the
// convergence checks), per fit seed.
const (
	// FRVIGradient: FitFRVI's reparameterisation noise.
	FRVIGradient Stream = 0xf7f1
	// PairedELBO: the common base draws of the edge check's paired ELBO
	// difference between two rates.
	PairedELBO Stream = 0xed9e
	// ImportanceCheck: the defensive importance draws of the moment check.
	ImportanceCheck Stream = 0x15c4
)

// Streams of package baselines/flows, per fit seed.
const (
	// FlowInit: the template weights every learning rate starts from.
	FlowInit Stream = 0x3ade
	// FlowGradient: the base draws of the ELBO gradient (common to every
	// rate).
	FlowGradient Stream = 0xf10e
	// FlowScratch, under seed 0: the throw-away initialisation of a flow
	// whose parameters are overwritten at once (a run's working flow, a
	// snapshot).
	FlowScratch Stream = 0
)

// NUTSChain: chain c of a NUTS run draws from NUTSChain.At(c) under the
// run's seed (so chain 0 uses stream 1).
const NUTSChain Stream = 1

// Streams of package posterior's metrics, per metric seed.
const (
	// SW2Directions: SW2's random unit directions ("SW2_dirs" in ASCII).
	SW2Directions Stream = 0x5357325f64697273
	// SW2ResampleA and SW2ResampleB: the resampling of the first and the
	// second draw set when SW2 resamples weighted draws.
	SW2ResampleA Stream = 1
	SW2ResampleB Stream = 2
)

// TrainTasks: the simulated training tasks of afin.Trainer, under the
// training seed.
const TrainTasks Stream = 0x5eed

// HardCases: the draws of factor/factortest' stress tasks.
const HardCases Stream = 17

// Simulate is the stream of `afin simulate`, so a seed there does not
// replay another use of the same seed.
const Simulate Stream = 0x51a1
