package methods

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/afin-bench/afin/baselines/nuts"
	"github.com/afin-bench/afin/catalog"
	"github.com/afin-bench/afin/factor"
	"github.com/afin-bench/afin/internal/streams"
	"github.com/afin-bench/afin/posterior"
	"github.com/afin-bench/afin/records"
)

// ErrNoStagePassed: auto's fallback NUTS run failed its own convergence
// checks too, so auto has no result it can vouch for.
var ErrNoStagePassed = errors.New("auto: no stage passed its diagnostics")

// Stages of auto.
const (
	AutoStageSNIS = AFINSNIS
	AutoStageNUTS = NUTS
)

// AutoOptions configure auto, the amortised workflow as one method: AFIN's
// forward pass, PSIS-checked SNIS on its draws, and NUTS initialised from
// AFIN when the check fails.
type AutoOptions struct {
	// MaxParetoK is the largest PSIS k̂ at which SNIS answers (Vehtari et
	// al. 2024: 0.7 for any sample size ≥ 2200, stricter below).
	MaxParetoK float64
	// Warmup, Chains, MaxDepth configure the fallback NUTS; Warmup is
	// shortened because chains start at AFIN draws with AFIN's
	// covariance as a dense metric (only the step size is adapted).
	Warmup, Chains, MaxDepth int
	// MaxRhat, MinESSBulk and MaxDivergences are the checks the NUTS
	// stage must pass before auto returns its draws.
	MaxRhat        float64
	MinESSBulk     float64
	MaxDivergences int
	// Retries reruns a NUTS stage that failed its checks with twice the
	// draws per chain (thinned to the budget), at most this many times.
	Retries int
}

// DefaultAutoOptions: k̂ ≤ 0.7; NUTS with 4 chains, 200 warm-up
// iterations (a fifth of the default), R̂ ≤ 1.01, bulk ESS ≥ 100, no
// divergences, one rerun at twice the length when a check fails.
func DefaultAutoOptions() AutoOptions {
	c := autoNUTSChecks
	return AutoOptions{MaxParetoK: 0.7, Warmup: 200, Chains: 4, MaxDepth: 10,
		MaxRhat: c.MaxRhat, MinESSBulk: c.MinESSBulk, MaxDivergences: c.MaxDivergences, Retries: 1}
}

// autoNUTSChecks are auto's default checks of its NUTS stage; the
// catalog carries them so the report flags any NUTS answer by the same.
var autoNUTSChecks = catalog.SamplerChecks{MaxRhat: 1.01, MinESSBulk: 100, MaxDivergences: 0}

func (o AutoOptions) check(ladder []int) error {
	switch {
	case !(o.MaxParetoK > 0) || !(o.MaxParetoK <= MaxParetoK):
		// Above 0.7 the SNIS answer would carry a poor-fit flag, and auto
		// never answers with a flag raised.
		return badInput("--max-k must be in (0, %g], got %g", MaxParetoK, o.MaxParetoK)
	case o.Warmup < 0 || o.Chains < 1 || o.MaxDepth < 1 || o.MaxDepth > 30:
		return badInput("auto NUTS needs --warmup ≥ 0, --chains ≥ 1, --max-depth in [1, 30]; got %d, %d, %d", o.Warmup, o.Chains, o.MaxDepth)
	case !(o.MaxRhat >= 1) || o.MinESSBulk < 0 || o.MaxDivergences < 0 || o.Retries < 0 || o.Retries > 4:
		return badInput("auto checks need R̂ ≥ 1, ESS ≥ 0, divergences ≥ 0, retries in [0, 4]; got %g, %g, %d, %d",
			o.MaxRhat, o.MinESSBulk, o.MaxDivergences, o.Retries)
	}
	if err := checkLadder(KindDraws, ladder, 2); err != nil {
		return err
	}
	for _, n := range ladder {
		if n%o.Chains != 0 || n/o.Chains < 4 {
			return badInput("--draws must be a multiple of --chains (%d) with at least 4 per chain, got %d", o.Chains, n)
		}
	}
	return nil
}

// AutoDiagnostics record which stage answered and why.
type AutoDiagnostics struct {
	Stage  string `json:"auto_stage"`
	Reason string `json:"auto_reason"`
	// NUTS is 1 when NUTS answered, 0 for SNIS (the numeric form a
	// results record keeps).
	NUTS int `json:"auto_nuts"`
	// ParetoK is the SNIS stage's k̂, whichever stage answered.
	ParetoK records.Num `json:"auto_pareto_k"`
	// Outside says why the task lies outside the checkpoint's training
	// support ("" inside).
	Outside string `json:"auto_outside,omitempty"`
	// Warmup is the NUTS stage's warm-up per chain (0 when SNIS answered).
	Warmup int `json:"auto_warmup"`
	// Attempts counts NUTS runs (0 when SNIS answered).
	Attempts int `json:"auto_attempts"`
	// TrainSeconds is the checkpoint's training wall time (the last
	// "seconds" of its train.jsonl; NaN when it has none): what the
	// report's break-even count divides by the per-task saving.
	TrainSeconds records.Num `json:"auto_train_seconds"`
}

var (
	trainMu   sync.Mutex
	trainSecs = map[string]float64{}
)

// trainingSeconds reads (once per directory) the training wall time a
// checkpoint's train.jsonl log ends with.
func trainingSeconds(dir string) float64 {
	trainMu.Lock()
	defer trainMu.Unlock()
	if v, ok := trainSecs[dir]; ok {
		return v
	}
	v := math.NaN()
	if data, err := os.ReadFile(filepath.Join(dir, "train.jsonl")); err == nil {
		lines := strings.Split(strings.TrimSpace(string(data)), "\n")
		var last struct {
			Seconds *float64 `json:"seconds"`
		}
		if json.Unmarshal([]byte(lines[len(lines)-1]), &last) == nil && last.Seconds != nil {
			v = *last.Seconds
		}
	}
	trainSecs[dir] = v
	return v
}

// Auto is the amortised workflow as one method: AFIN+SNIS when its
// diagnostics pass, AFIN-initialised NUTS otherwise.
const Auto = "auto"

func init() {
	registerNetwork(catalog.Entry{
		Name: Auto, Summary: "the amortised workflow: AFIN+SNIS when its diagnostics pass, else AFIN-initialised NUTS",
		Kind: KindDraws, Family: catalog.Amortised,
		Workflow: &catalog.Workflow{Network: AFIN, Weighted: AutoStageSNIS, Fallback: AutoStageNUTS, Checks: autoNUTSChecks},
		Rank:     8,
	}, func(n onNetwork) Method { return autoMethod{n} }, autoMethod{}.Slots,
		func(fs *flag.FlagSet, f *InferFlags) {
			o := f.Options
			f.Budget = fs.Int("draws", 4000, "SNIS proposals, or NUTS draws over all chains when NUTS answers (a multiple of --chains)")
			a := &o.Auto
			fs.Float64Var(&a.MaxParetoK, "max-k", a.MaxParetoK, "largest PSIS k-hat at which SNIS answers (at most 0.7: auto never answers with a flag raised)")
			fs.IntVar(&a.Warmup, "warmup", a.Warmup, "warm-up of the AFIN-initialised NUTS fallback (step size only; AFIN's covariance is the metric)")
			fs.IntVar(&a.Chains, "chains", a.Chains, "NUTS fallback chains")
			fs.IntVar(&a.MaxDepth, "max-depth", a.MaxDepth, "NUTS fallback maximum tree depth")
			fs.Float64Var(&a.MaxRhat, "max-rhat", a.MaxRhat, "largest R-hat at which the NUTS fallback answers")
			fs.Float64Var(&a.MinESSBulk, "min-ess", a.MinESSBulk, "least bulk ESS at which the NUTS fallback answers")
			fs.IntVar(&a.Retries, "retries", a.Retries, "reruns of a NUTS fallback that failed its checks, each with twice the draws per chain")
		})
}

// autoMethod is the amortised workflow as one method. Its budget is
// draws: the SNIS stage's proposals, or the NUTS stage's draws over all
// chains. Seconds: the AFIN pass and SNIS, plus NUTS when it runs.
type autoMethod struct{ onNetwork }

func (autoMethod) Name() string              { return Auto }
func (autoMethod) Kind() string              { return KindDraws }
func (autoMethod) Slots(ladder []int) []Slot { return ladderSlots(KindDraws, ladder) }

func (m autoMethod) Run(ctx context.Context, job *Job, emit func(Point) error) error {
	o := job.Options.Auto
	if err := o.check(job.Ladder); err != nil {
		return err
	}
	return emitLadder(job.Ladder, emit, func(i, n int) (*Point, error) {
		return m.point(ctx, job, o, n, i)
	})
}

// point runs the workflow once at budget n.
func (m autoMethod) point(ctx context.Context, job *Job, o AutoOptions, n, i int) (*Point, error) {
	task := job.Task
	p, err := m.net.run(ctx, task, n, streams.New(job.Seed, streams.AFINLadder.At(i)))
	if err != nil {
		return nil, err
	}
	snis, info, secs, err := timedSNIS(ctx, task, p)
	if err != nil {
		return nil, fmt.Errorf("auto with %d draws: %w", n, err)
	}
	ad := &AutoDiagnostics{ParetoK: records.Num(info.ParetoK), Outside: m.net.outside(task),
		TrainSeconds: records.Num(trainingSeconds(m.net.model.Dir))}
	settings := Settings{CheckpointStep: m.net.model.Step}
	// The SNIS answer settled as any point is: auto returns it only when
	// it raises no flag at all (support, k̂, degenerate weights, or any
	// flag added later), so auto is right or slow, never flagged.
	cand := Point{Slot: Slot{Kind: KindDraws, Budget: n}, Draws: snis, Seconds: p.fwd + p.sampling + secs,
		Diagnostics: Diagnostics{AFINDiagnostics: m.net.diagnostics(p), SNISDiagnostics: newSNISDiagnostics(n, info, secs),
			Flags: m.net.flags(task), AutoDiagnostics: ad},
		Settings: settings}
	why := refuseSNIS(&cand, info.ParetoK, o.MaxParetoK)
	if len(why) == 0 {
		ad.Stage = AutoStageSNIS
		ad.Reason = fmt.Sprintf("pareto_k %.3g ≤ %g, the task is inside the training support and no flag is raised", info.ParetoK, o.MaxParetoK)
		cand.Diagnostics.Flags = nil
		return &cand, nil
	}
	ad.Reason = strings.Join(why, "; ")
	ad.Stage, ad.NUTS, ad.Warmup = AutoStageNUTS, 1, o.Warmup
	draws, nd, nutsSecs, err := m.nutsStage(ctx, task, p, o, n, job.Seed, i, ad)
	if err != nil {
		return nil, err
	}
	settings.Warmup, settings.Chains = o.Warmup, o.Chains
	return &Point{Slot: Slot{Kind: KindDraws, Budget: n}, Draws: draws, Seconds: p.fwd + p.sampling + secs + nutsSecs,
		Diagnostics: Diagnostics{AFINDiagnostics: m.net.diagnostics(p), NUTSDiagnostics: nd, AutoDiagnostics: ad},
		Settings:    settings}, nil
}

// refuseSNIS settles auto's SNIS answer and says why auto must not return
// it (nil when it may): a k̂ above maxK (NaN and +Inf included) or any
// flag the answer raises.
func refuseSNIS(cand *Point, k, maxK float64) []string {
	cand.Settle()
	var why []string
	if !(k <= maxK) {
		why = append(why, fmt.Sprintf("pareto_k %.3g > %g", k, maxK))
	}
	if f := cand.Diagnostics.Flags; f != nil {
		for _, w := range f.Warnings {
			if w != f.PoorFit || len(why) == 0 || !strings.HasPrefix(why[0], "pareto_k") {
				why = append(why, w)
			}
		}
	}
	return why
}

// nutsStage runs AFIN-initialised NUTS until it passes its checks: a run
// that fails is rerun up to o.Retries times with twice the draws per chain
// (thinned back to n), since short runs fail R̂ ≤ 1.01 by noise as often
// as by non-convergence. Seconds are every attempt's; the diagnostics are
// the accepted run's before thinning.
func (m autoMethod) nutsStage(ctx context.Context, task *factor.Task, p *proposal, o AutoOptions, n int, seed uint64, i int,
	ad *AutoDiagnostics) (*posterior.Draws, *NUTSDiagnostics, float64, error) {
	total := 0.0
	var why string
	for a := 0; a <= o.Retries; a++ {
		res, nd, err := warmNUTS(ctx, task, p, o, n<<a, seed+uint64(a), i)
		if err != nil {
			return nil, nil, 0, fmt.Errorf("auto (%s) with %d draws: %w", ad.Reason, n, err)
		}
		total += res.Seconds
		ad.Attempts = a + 1
		if why = nutsFailed(nd, o); why == "" {
			return thinned(res, 1<<a), nd, total, nil
		}
	}
	return nil, nil, 0, fmt.Errorf("%w: SNIS refused (%s) and NUTS %s after %d attempt(s)", ErrNoStagePassed, ad.Reason, why, o.Retries+1)
}

// thinned pools every k-th draw of each chain.
func thinned(res *nuts.Result, k int) *posterior.Draws {
	d := res.D
	out := &posterior.Draws{D: d}
	for _, c := range res.Chains {
		for s := 0; s*d < len(c); s += k {
			out.Z = append(out.Z, c[s*d:(s+1)*d]...)
		}
	}
	return out
}

// timedSNIS weights an AFIN pass's proposals by p̃/q.
func timedSNIS(ctx context.Context, task *factor.Task, p *proposal) (*posterior.Draws, posterior.SNISInfo, float64, error) {
	start := time.Now()
	d, info, err := posterior.SNISDraws(ctx, task, p.draws, p.logQ)
	return d, info, time.Since(start).Seconds(), err
}

// warmNUTS runs NUTS with chains started at distinct AFIN proposals where
// the target is finite, AFIN's covariance as a dense metric and a short
// warm-up that adapts the step size only.
func warmNUTS(ctx context.Context, task *factor.Task, p *proposal, o AutoOptions, n int, seed uint64, i int) (*nuts.Result, *NUTSDiagnostics, error) {
	d := task.D
	inits, err := pickInits(task, p.draws, o.Chains, streams.New(seed, streams.AutoInit.At(i)))
	if err != nil {
		return nil, nil, err
	}
	var cov []float64
	if p.g != nil {
		_, cov = p.g.Moments()
	} else {
		cov = p.draws.Cov()
	}
	res, err := nuts.Sample(ctx, task, d, nuts.Config{
		Warmup: o.Warmup, Draws: n / o.Chains, Chains: o.Chains, MaxDepth: o.MaxDepth, Dense: true,
		Seed: streams.NUTSLadderSeed(seed, i), Init: inits[0], Inits: inits, InvMetric: cov,
	})
	if err != nil {
		return nil, nil, err
	}
	return res, &NUTSDiagnostics{
		Divergences: res.Divergences, AcceptRate: records.Num(res.AcceptRate), StepSize: records.Num(res.StepSize),
		ESSBulk: records.Num(res.Convergence.MinESSBulk), ESSTail: records.Num(res.Convergence.MinESSTail),
		Rhat: records.Num(res.Convergence.MaxRhat), GradEvals: res.GradEvals, TreeDepthMean: records.Num(res.MeanDepth),
		TreeDepthHist: res.DepthHist, Chains: o.Chains,
	}, nil
}

// pickInits draws k distinct proposals with a finite target density.
func pickInits(task *factor.Task, draws *posterior.Draws, k int, rng *rand.Rand) ([][]float64, error) {
	var out [][]float64
	for _, s := range rng.Perm(draws.Len()) {
		z := draws.Row(s)
		if lp := task.LogDensity(z); !math.IsNaN(lp) && !math.IsInf(lp, 0) {
			out = append(out, append([]float64(nil), z...))
			if len(out) == k {
				return out, nil
			}
		}
	}
	return nil, fmt.Errorf("only %d of %d AFIN draws have a finite target density, need %d NUTS starts", len(out), draws.Len(), k)
}

// nutsFailed says which of the NUTS stage's own checks failed ("" none).
func nutsFailed(nd *NUTSDiagnostics, o AutoOptions) string {
	switch {
	case nd.Divergences > o.MaxDivergences:
		return fmt.Sprintf("had %d divergences (> %d)", nd.Divergences, o.MaxDivergences)
	case !(float64(nd.Rhat) <= o.MaxRhat):
		return fmt.Sprintf("has R̂ %.4g (> %g)", float64(nd.Rhat), o.MaxRhat)
	case !(float64(nd.ESSBulk) >= o.MinESSBulk):
		return fmt.Sprintf("has bulk ESS %.4g (< %g)", float64(nd.ESSBulk), o.MinESSBulk)
	}
	return ""
}
