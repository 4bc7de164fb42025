package methods

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/afin-bench/afin/afin"
	"github.com/afin-bench/afin/baselines/flows"
	"github.com/afin-bench/afin/baselines/vi"
	"github.com/afin-bench/afin/factor"
	"github.com/afin-bench/afin/posterior"
)

// Sentinel errors; callers test them with errors.Is.
var (
	// ErrBadInput marks options, budgets or names a user gave wrong.
	ErrBadInput = errors.New("bad input")
	// ErrNotConjugate: the exact method on a task without a closed form.
	ErrNotConjugate = errors.New("method exact needs a conjugate task (diag_gaussian or fullrank_gaussian prior, only gaussian and lin_gaussian factors)")
	// ErrUnavailable: the method cannot run in this environment (no
	// checkpoint, say); a benchmark skips it unless it was asked for.
	ErrUnavailable = errors.New("method unavailable")
)

// inputError is an ErrBadInput whose text is just its message, so the
// CLI prints the one line a user needs.
type inputError struct{ msg string }

func (e *inputError) Error() string        { return e.msg }
func (e *inputError) Is(target error) bool { return target == ErrBadInput }

// badInput formats a message as an ErrBadInput.
func badInput(format string, args ...any) error {
	return &inputError{fmt.Sprintf(format, args...)}
}

// Budget kinds.
const (
	KindDraws     = "draws"
	KindSteps     = "steps"
	KindProposals = "proposals"
)

// StageProposal marks the proposal an SNIS method reweights (the paper's
// star), emitted beside the method's own points.
const StageProposal = "proposal"

// Method is one inference method.
type Method interface {
	// Name is the method's CLI name.
	Name() string
	// Kind is the budget kind of its ladder.
	Kind() string
	// Slots lists the points a run along ladder emits, so a runner can
	// tell a finished unit from a partial one without running it.
	Slots(ladder []int) []Slot
	// Run runs the method on job.Task along job.Ladder and calls emit
	// once per slot, in any order.
	Run(ctx context.Context, job *Job, emit func(Point) error) error
}

// Provenancer is implemented by methods whose output depends on an
// artefact beyond the code (AFIN's checkpoint).
type Provenancer interface {
	// CheckpointHash is the hex SHA-256 of the checkpoint used.
	CheckpointHash() string
}

// Slot names one point of a unit: its stage ("" or StageProposal),
// budget kind and budget.
type Slot struct {
	Stage  string
	Kind   string
	Budget int
}

// Job is one unit of work for a method.
type Job struct {
	Task *factor.Task
	// Seed seeds all of the method's randomness (through the streams of
	// internal/streams).
	Seed    uint64
	Ladder  []int
	Options Options
	// Score is SW2 to the unit's reference; oracle learning-rate
	// selection needs it.
	Score func(*posterior.Draws) float64
	// ScoreBound is a lower bound on Score of any draws with this mean
	// and covariance (divisor n): oracle selection scores only the fits
	// whose bound does not rule them out. Nil bounds nothing.
	ScoreBound func(mean, cov []float64) float64
	// SkipProposal leaves out the SNIS proposal star (afin infer reports
	// only the method's own output).
	SkipProposal bool
	// Progress receives progress bars (nil: none).
	Progress io.Writer
}

// Point is one output of a method at one budget.
type Point struct {
	Slot
	// Draws may be nil only when a closed form exists and no draws were
	// asked for (budget 0 of exact or afin).
	Draws *posterior.Draws
	// Mean and Cov (row-major) are the closed-form moments when the
	// method has them (exact, Gaussian AFIN, FRVI); nil otherwise.
	Mean, Cov []float64
	// Scored is Job.Score of Draws when the method computed it already
	// (an oracle selection scores the very draws the chosen fit then
	// reports), so the scorer need not compute it again; nil otherwise.
	Scored *float64
	// Twin, on an SNIS proposal star, is the draws of the point emitted
	// next: the same proposals with their weights. A scorer may score
	// both in one pass over the draws (posterior.SW2PerDirectionShared).
	Twin        *posterior.Draws
	Seconds     float64
	Diagnostics Diagnostics
	Settings    Settings
}

// Options are every method's typed settings; a method reads only its own
// part and validates it (no defaults are filled in silently).
type Options struct {
	NUTS NUTSOptions
	VI   VIOptions
	// Flow is the architecture of iaf, maf and nsf.
	Flow flows.Arch
	// FRVISteps is the FRVI optimisation behind an frvi-snis proposal.
	FRVISteps int
	IMH       IMHOptions
	Auto      AutoOptions
}

// NUTSOptions configure short-run NUTS.
type NUTSOptions struct {
	Warmup     int     // warm-up iterations per chain
	Chains     int     // chains per run; draws are split evenly
	MaxDepth   int     // maximum tree depth
	Dense      bool    // dense mass matrix instead of diagonal
	InitJitter float64 // chains start at prior location + U(−j, j)
}

// VIOptions configure the VI methods' optimisation protocol.
type VIOptions struct {
	// Protocol is vi.ProtocolPractitioner (the default: Laplace start,
	// whitened coordinates) or vi.ProtocolPaper (prior start in z's
	// units, the paper's fixed ladders); "" means the practitioner's.
	Protocol vi.Protocol
	// LRs are the learning rates swept; nil means the protocol's own
	// (vi.Protocol.DefaultLRs): a rate means a fraction of a posterior
	// sd per step under the practitioner protocol and a step in z's
	// units under the paper's, so one list does not serve both.
	LRs       []float64
	Selection vi.Selection // how the rate per budget is picked
	MCSamples int          // reparameterised draws per step
	Draws     int          // draws from q per point (frvi, flows)
}

// DefaultOptions are the settings `afin infer` starts from: the paper's
// NUTS setup, the practitioner's VI protocol with its own rate sweep, ELBO
// selection (no reference needed) and the default flow architecture.
func DefaultOptions() Options {
	return Options{
		NUTS: NUTSOptions{Warmup: 1000, Chains: 4, MaxDepth: 10},
		VI: VIOptions{Protocol: vi.ProtocolPractitioner, Selection: vi.SelectELBO,
			MCSamples: 4, Draws: 4000},
		Flow:      flows.DefaultArch(),
		FRVISteps: 10000,
		IMH:       DefaultIMHOptions(),
		Auto:      DefaultAutoOptions(),
	}
}

// Settings are what a point records of the options that produced it
// (results' method_settings).
type Settings struct {
	CheckpointStep int       `json:"checkpoint_step,omitempty"`
	Warmup         int       `json:"warmup,omitempty"`
	Chains         int       `json:"chains,omitempty"`
	Protocol       string    `json:"protocol,omitempty"`
	LRs            []float64 `json:"lrs,omitempty"`
	Selection      string    `json:"selection,omitempty"`
	Draws          int       `json:"draws,omitempty"`
	Steps          int       `json:"steps,omitempty"`
	LR             float64   `json:"lr,omitempty"`
}

// Env is what methods need from their environment. One Env shared by the
// afin and afin-snis adapters of a run loads the network once.
type Env struct {
	Checkpoint string // AFIN checkpoint directory; "" finds the shipped one
	// Engine runs the network (the zero value: native).
	Engine afin.EngineChoice
	// CacheDir is the cache root the embedded checkpoint is extracted
	// into when Checkpoint is "" ("": the user cache).
	CacheDir string
	// MethodsFile configures the external exec:NAME methods; "" has none
	// (the CLI passes --methods-file, else $AFIN_METHODS_FILE).
	MethodsFile string
	// Warn, when set, is told before a method starts work the caller
	// should hear of first: the AFIN methods say so before their forward
	// pass when the task lies outside the checkpoint's support or the
	// pass is predicted to be long (network.preflight). The CLI prints
	// it on stderr.
	Warn func(msg string)
	net  *netOnce
}

// WithCheckpoint is e's settings with another checkpoint and a network
// not yet loaded (copying e would share e's loaded network). A nil e
// gives the defaults.
func (e *Env) WithCheckpoint(dir string) *Env {
	if e == nil {
		return &Env{Checkpoint: dir}
	}
	return &Env{Checkpoint: dir, Engine: e.Engine, CacheDir: e.CacheDir, MethodsFile: e.MethodsFile, Warn: e.Warn}
}

// checkLadder refuses an empty, unsorted ladder or a budget below least
// (0 admits moments only, for closed-form methods). Messages name the
// budget by its CLI flag: the vocabulary is the same everywhere.
func checkLadder(kind string, ladder []int, least int) error {
	if len(ladder) == 0 {
		return badInput("no --%s budget given", kind)
	}
	for i, b := range ladder {
		if b < least {
			return badInput("--%s must be ≥ %d, got %d", kind, least, b)
		}
		if i > 0 && b <= ladder[i-1] {
			return badInput("--%s budgets must increase, got %v", kind, ladder)
		}
	}
	return nil
}

// ladderSlots is the slot list of a plain ladder method.
func ladderSlots(kind string, ladder []int) []Slot {
	out := make([]Slot, len(ladder))
	for i, b := range ladder {
		out[i] = Slot{Kind: kind, Budget: b}
	}
	return out
}

// snisSlots adds the proposal star at the largest budget.
// emitLadder emits point(i, n) for each budget n of the ladder in turn,
// stopping at the first error.
func emitLadder(ladder []int, emit func(Point) error, point func(i, n int) (*Point, error)) error {
	for i, n := range ladder {
		pt, err := point(i, n)
		if err != nil {
			return err
		}
		if err := emit(*pt); err != nil {
			return err
		}
	}
	return nil
}

func snisSlots(ladder []int) []Slot {
	return append(ladderSlots(KindProposals, ladder), Slot{Stage: StageProposal, Kind: KindProposals, Budget: slices.Max(ladder)})
}
