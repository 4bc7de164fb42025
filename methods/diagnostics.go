package methods

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/afin-bench/afin/baselines/vi"
	"github.com/afin-bench/afin/posterior"
	"github.com/afin-bench/afin/records"
)

// Diagnostics is what a point reports beyond its draws: `afin infer
// --json` prints it as "diagnostics" and a results record keeps its
// numeric entries. Each method family fills its part; absent parts are
// left out of the JSON. Non-finite numbers are written as the strings
// "NaN", "Inf" and "-Inf" (records.Num).
type Diagnostics struct {
	*SNISDiagnostics
	*NUTSDiagnostics
	*VIDiagnostics
	*AFINDiagnostics
	*FitDiagnostics
	*Flags
	*IMHDiagnostics
	*AutoDiagnostics
	*ExecDiagnostics
}

// Flags are the warnings a point carries about its own trustworthiness:
// a reader of a table must be able to tell a bad baseline from a bad
// method. Each flag is a field saying why ("" when not raised); Warnings
// holds every raised flag in words, one line each, and is what `afin
// infer` prints to stderr and a results record keeps. Point.Settle
// derives the flags that follow from a point's numbers and fills
// Warnings; a new flag is a field here, a line in settle.go, and nothing
// else (records, report and gate read Raised and Warnings).
type Flags struct {
	// Converged is false when a VI fit failed a convergence check, with
	// ConvergenceReason naming it; nil when the method was not assessed.
	Converged         *bool  `json:"converged,omitempty"`
	ConvergenceReason string `json:"convergence_reason,omitempty"`
	// OutsideSupport says why the task lies outside the AFIN checkpoint's
	// training support ("" when inside or not an AFIN method).
	OutsideSupport string `json:"outside_support,omitempty"`
	// PoorFit says why the answer's draws do not represent the posterior
	// by their own importance weights: PSIS k̂ above MaxParetoK, of the
	// defensive weights of AFIN's draws or of an SNIS answer's weights.
	PoorFit string `json:"poor_fit,omitempty"`
	// Degenerate says why a weighted answer rests on too few draws (Kish
	// ESS below MinESS, or an SNIS answer's below MinSNISESS) or why some
	// coordinate's sd is exactly 0.
	Degenerate string `json:"degenerate,omitempty"`
	// Sampler says which of an MCMC answer's own checks failed (R̂, bulk
	// ESS, divergences, or an IMH proposal too small for its k̂).
	Sampler string `json:"sampler,omitempty"`
	// TooWide, TooNarrow and Shifted say why an AFIN answer's sds or
	// mean differ from the importance-weighted moments of its own draws
	// beyond FitWidthMax or FitShiftMax and beyond their Monte Carlo
	// error (momentFlags).
	TooWide   string `json:"too_wide,omitempty"`
	TooNarrow string `json:"too_narrow,omitempty"`
	Shifted   string `json:"shifted,omitempty"`
	// NearThreshold names the fit check's statistics that lie within
	// their Monte Carlo error of their thresholds (nearFlags): passed or
	// flagged, the verdict there could go either way with other draws.
	NearThreshold string `json:"near_threshold,omitempty"`
	// NoLikelihood is NoLikelihoodWarning when the task has no factors:
	// every method then answers the prior, which is rarely what a user
	// who ran inference meant (Run raises it for every method alike).
	NoLikelihood string `json:"no_likelihood,omitempty"`
	// Warnings is every raised flag in words (Settle fills it).
	Warnings []string `json:"warnings,omitempty"`
	// TaskWarnings name the task's values that lie far outside the range
	// every method was tested on (factor.Task.Warnings): the answer is
	// computed but untested there.
	TaskWarnings []string `json:"task_warnings,omitempty"`
}

// NotConverged returns flags for a fit that failed a convergence check.
func NotConverged(reason string) *Flags {
	f := false
	return &Flags{Converged: &f, ConvergenceReason: reason}
}

// Raised returns the raised flags by name (their JSON names), with why;
// nil when none is.
func (f *Flags) Raised() map[string]string {
	if f == nil {
		return nil
	}
	out := map[string]string{}
	if f.Converged != nil && !*f.Converged {
		out["not_converged"] = f.ConvergenceReason
		if out["not_converged"] == "" {
			out["not_converged"] = "not converged"
		}
	}
	for name, why := range map[string]string{"outside_support": f.OutsideSupport, "poor_fit": f.PoorFit,
		"degenerate": f.Degenerate, "sampler": f.Sampler, "no_likelihood": f.NoLikelihood,
		"too_wide": f.TooWide, "too_narrow": f.TooNarrow, "shifted": f.Shifted, "near_threshold": f.NearThreshold} {
		if why != "" {
			out[name] = why
		}
	}
	if len(f.TaskWarnings) > 0 {
		out["task_range"] = strings.Join(f.TaskWarnings, "; ")
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// SNISDiagnostics are the importance-weight diagnostics of an SNIS point
// (the paper's Table 9 columns plus Kish ESS).
type SNISDiagnostics struct {
	Proposals    int         `json:"proposals"`
	ParetoK      records.Num `json:"pareto_k"`
	MaxWeight    records.Num `json:"max_weight"`
	EntropyRatio records.Num `json:"entropy_ratio"`
	ESS          records.Num `json:"ess"`
	NonFinite    int         `json:"non_finite"`
	// SNISSeconds is the proposals' log q, target evaluations and weights.
	SNISSeconds records.Num `json:"snis_seconds"`
}

// newSNISDiagnostics is the one place SNIS weight diagnostics are turned
// into a point's diagnostics.
func newSNISDiagnostics(n int, info posterior.SNISInfo, secs float64) *SNISDiagnostics {
	return &SNISDiagnostics{
		Proposals: n, ParetoK: records.Num(info.ParetoK), MaxWeight: records.Num(info.MaxWeight),
		EntropyRatio: records.Num(info.EntropyRatio), ESS: records.Num(info.ESS),
		NonFinite: info.NonFinite, SNISSeconds: records.Num(secs),
	}
}

// NUTSDiagnostics describe a NUTS run; ESS and R̂ are the worst over
// coordinates.
type NUTSDiagnostics struct {
	Divergences   int         `json:"divergences"`
	AcceptRate    records.Num `json:"accept_rate"`
	StepSize      records.Num `json:"step_size"`
	ESSBulk       records.Num `json:"ess_bulk"`
	ESSTail       records.Num `json:"ess_tail"`
	Rhat          records.Num `json:"rhat"`
	GradEvals     int64       `json:"grad_evals"`
	TreeDepthMean records.Num `json:"tree_depth_mean"`
	TreeDepthHist []int       `json:"tree_depth_hist,omitempty"`
	Chains        int         `json:"chains"`
	// CPUSeconds is the process's CPU time over warm-up and sampling: on
	// a shared machine a fairer cost than wall-clock seconds.
	CPUSeconds records.Num `json:"cpu_seconds"`
}

// VIDiagnostics describe a VI fit, its protocol, its learning-rate
// selection and the convergence checks of the chosen fit (vi.Convergence;
// the verdict itself is in Flags).
type VIDiagnostics struct {
	// Protocol is "practitioner" or "paper" (vi.Protocol); Start what the
	// fit started from ("laplace", "prior", or why the Laplace start
	// failed).
	Protocol    string      `json:"protocol"`
	Start       string      `json:"start"`
	LR          float64     `json:"lr"`
	Selection   string      `json:"lr_select"`
	LRsTried    int         `json:"lrs_tried"`
	LRsDiverged int         `json:"lrs_diverged"`
	Steps       int         `json:"steps"`
	ELBO        records.Num `json:"elbo"` // log Z-corrected, 2048 draws
	NParams     int         `json:"n_params,omitempty"`
	// OptimizeSeconds is the selected rate's optimisation to this budget
	// (charged); SweepSeconds every rate's (not charged).
	OptimizeSeconds records.Num `json:"optimize_seconds"`
	SweepSeconds    records.Num `json:"sweep_seconds"`
	SampleSeconds   records.Num `json:"sample_seconds"`
	// StartSeconds is the protocol's start (the Laplace approximation),
	// charged; CheckSeconds the convergence checks, not charged.
	StartSeconds records.Num `json:"start_seconds"`
	CheckSeconds records.Num `json:"check_seconds"`
	// The convergence checks' numbers (see vi.Convergence): the rate at
	// an edge of the sweep, the ELBO's rise over the last fifth of the
	// steps and its standard error, the mean gradient's signal-to-noise,
	// and the defensive importance check's k̂, largest mean shift (in q's
	// sds) and largest |log sd ratio|.
	LRAtEdge     bool        `json:"lr_at_edge"`
	ELBOGain     records.Num `json:"elbo_gain"`
	ELBOGainSE   records.Num `json:"elbo_gain_se"`
	GradSNR      records.Num `json:"grad_snr"`
	CheckParetoK records.Num `json:"check_pareto_k"`
	MeanShift    records.Num `json:"mean_shift_sd"`
	SDLogRatio   records.Num `json:"sd_log_ratio"`
	// ConvergenceNotes are trend findings (ELBO still rising, gradient
	// above its noise, a rate at the sweep's edge) on a fit whose
	// importance check passed: the answer's moments were confirmed
	// directly, so they do not fail it.
	ConvergenceNotes string `json:"convergence_notes,omitempty"`
}

// withConvergence fills the convergence checks' numbers of c into d and
// returns the verdict as Flags.
func (d *VIDiagnostics) withConvergence(c vi.Convergence) *Flags {
	d.LRAtEdge = c.LRAtEdge
	d.ELBOGain, d.ELBOGainSE = records.Num(c.ELBOGain), records.Num(c.ELBOGainSE)
	d.GradSNR, d.CheckParetoK = records.Num(c.GradSNR), records.Num(c.ParetoK)
	d.MeanShift, d.SDLogRatio = records.Num(c.MeanShift), records.Num(c.SDLogRatio)
	d.ConvergenceNotes = c.Notes
	ok := c.Converged
	return &Flags{Converged: &ok, ConvergenceReason: c.Reason}
}

// AFINDiagnostics describe the network run.
type AFINDiagnostics struct {
	Checkpoint     string `json:"checkpoint"`
	CheckpointStep int    `json:"checkpoint_step"`
	CheckpointHash string `json:"checkpoint_hash"`
	Config         string `json:"config"`
	Decoder        string `json:"decoder"`
	// Engine is the implementation that ran the network ("native" or
	// "gomlx:<backend>"); Kernel and CPUFeatures are the native engine's
	// matrix kernel on this machine and the CPU features it could use
	// (internal/gemm): a "generic" kernel runs several times slower.
	Engine          string      `json:"engine"`
	Kernel          string      `json:"kernel"`
	CPUFeatures     string      `json:"cpu_features"`
	ForwardSeconds  records.Num `json:"forward_seconds"`
	SamplingSeconds records.Num `json:"sampling_seconds"`
	Jitter          records.Num `json:"jitter"`
	// Rescaled is true when the task lay outside the training support and
	// the network answered a reparametrised task inside it instead
	// (θ = a + s⊙θ′ of the prior), mapped back exactly; Rescaling says how.
	Rescaled  bool   `json:"rescaled,omitempty"`
	Rescaling string `json:"rescaling,omitempty"`
	// WarmupSeconds is the untimed pass that compiled this input shape
	// before the timed one (GoMLX engine, first use of a shape; absent on
	// the native engine, which compiles nothing). It is not in the
	// record's seconds: a caller that pays it once per shape sees it here.
	WarmupSeconds records.Num `json:"warmup_seconds,omitempty"`
	// Programs and CompileSeconds are the GoMLX programs the process had
	// compiled by this answer and their compile time (absent on the native
	// engine): with the shapes bucketed, a whole suite levels off at a
	// handful.
	Programs       int         `json:"programs,omitempty"`
	CompileSeconds records.Num `json:"compile_seconds,omitempty"`
	// The forward pass as the cost and memory models forecast it before
	// it ran (afin.Model.Forecast): its products, the process's peak
	// memory and, on the native engine, its CPU seconds. LongForward is
	// true when that exceeded afin.LongForwardSeconds, which was said
	// before the pass (Env.Warn).
	PredictedFLOPs          int64       `json:"predicted_flops,omitempty"`
	PredictedPeakBytes      int64       `json:"predicted_peak_bytes,omitempty"`
	PredictedForwardSeconds records.Num `json:"predicted_forward_seconds,omitempty"`
	LongForward             bool        `json:"long_forward,omitempty"`
}

// FitDiagnostics measure an AFIN answer against the task's unnormalised
// posterior: PSIS k̂ and Kish ESS of the importance weights p̃/m of the
// network's draws joined by as many Student-t draws, m the equal mixture
// of q and the t (posterior.DefensiveOf, FRVI's convergence check).
// FitDraws is the number of weights (0 when the fit could not be
// measured, k̂ and ESS then NaN); FitSeconds what the measurement cost,
// not charged to the answer. k̂ > 0.7 raises Flags.PoorFit.
//
// The same weights give the moment check (posterior.MomentGap, rule in
// momentFlags): FitMeanShift is the largest distance, in posterior sds,
// between the answer's mean and the weighted mean of a coordinate;
// FitWideLog and FitNarrowLog the largest and smallest log(sd of the
// answer / weighted sd) over coordinates. NaN when not measured.
//
// FitCurvNarrowLog is the largest log(conditional sd / sd of the answer)
// over coordinates, the conditional sd 1/√(−∂²log p/∂zᵢ²) at the answer's
// mean (rule in momentFlags): importance weights from a too narrow answer
// cannot see the posterior's tails, the curvature can. NaN when not
// measured (d above fitCurvatureMaxD, or a curvature that is not
// positive).
type FitDiagnostics struct {
	FitParetoK   records.Num `json:"fit_pareto_k"`
	FitESS       records.Num `json:"fit_ess"`
	FitDraws     int         `json:"fit_draws"`
	FitSeconds   records.Num `json:"fit_seconds"`
	FitMeanShift records.Num `json:"fit_mean_shift"`
	FitWideLog   records.Num `json:"fit_wide_log"`
	FitNarrowLog records.Num `json:"fit_narrow_log"`
	// FitCurvNarrowLog: see above.
	FitCurvNarrowLog records.Num `json:"fit_curvature_narrow_log"`
	// The coordinates (1-based) of the three extremes, for the flags'
	// words (0 when not measured).
	ShiftCoord  int `json:"-"`
	WideCoord   int `json:"-"`
	NarrowCoord int `json:"-"`
	CurvCoord   int `json:"-"`
}

// Numbers returns the numeric entries, as a results record stores them
// (non-finite values as NaN; strings and lists left out).
func (d Diagnostics) Numbers() (map[string]float64, error) {
	raw, err := jsonMap(d)
	if err != nil {
		return nil, fmt.Errorf("diagnostics: %w", err)
	}
	out := map[string]float64{}
	for k, v := range raw {
		switch x := v.(type) {
		case float64:
			out[k] = x
		case nil:
			out[k] = math.NaN()
		case string:
			// A non-finite records.Num; other strings are not numbers.
			if f, ok := records.ParseToken(x); ok {
				out[k] = f
			}
		}
	}
	if d.ExecDiagnostics != nil {
		// An external method's own numbers, under its own names.
		for k, v := range d.Reported {
			out[k] = float64(v)
		}
	}
	return out, nil
}

// Map returns the settings as a results record's method_settings (nil
// when empty).
func (s Settings) Map() (map[string]any, error) {
	m, err := jsonMap(s)
	if err != nil || len(m) == 0 {
		return nil, err
	}
	return m, nil
}

// jsonMap is v's JSON object form: the keys a record or `afin infer
// --json` shows for it.
func jsonMap(v any) (map[string]any, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encoding: %w", err)
	}
	var out map[string]any
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("decoding: %w", err)
	}
	return out, nil
}
