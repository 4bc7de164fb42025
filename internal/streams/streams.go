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
	// AFINProposal: the AFIN+SNIS proposal star (the unweighted proposal
	// at the largest budget).
	AFINProposal Stream = 0x57a2
	// AFINWarmup: the untimed pass that compiles a flow decoder's graph.
	AFINWarmup Stream = 0xa3f0
	// VIDraws: draws from a fitted VI approximation (FRVI, flows), also
	// the draws an oracle selection scores and FRVI+SNIS's proposal star.
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

// Streams still written as literals in their packages, listed so this
// file shows every stream of the module; their packages should adopt
// these names.
const (
	FRVIGradient  Stream = 0xf7f1             // baselines/vi FitFRVI noise
	SW2ScoreDraws Stream = 0x5c02e            // baselines/vi SW2Score
	FlowInit      Stream = 0x3ade             // baselines/flows template weights
	FlowGradient  Stream = 0xf10e             // baselines/flows base draws
	TrainTasks    Stream = 0x5eed             // afin/train.go
	SW2Directions Stream = 0x5357325f64697273 // posterior/metrics.go, "SW2_dirs"
	SW2ResampleA  Stream = 1                  // posterior/metrics.go
	SW2ResampleB  Stream = 2                  // posterior/metrics.go
)

// Simulate is the stream of `afin simulate`, so a seed there does not
// replay another use of the same seed.
const Simulate Stream = 0x51a1
