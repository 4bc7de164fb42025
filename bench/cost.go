package bench

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/afin-bench/afin/catalog"
	"github.com/afin-bench/afin/factor"
	"github.com/afin-bench/afin/methods"
)

// The cost model says what a unit, and the building of a task's target,
// cost in CPU seconds before anything runs: `afin bench --estimate`
// prints it, the shards balance it and the progress ETA weighs units by
// it. It is a power law per method,
//
//	cpu = exp(LogA) · d^D · N^N · work^Work,
//
// fitted by least squares on log CPU seconds (FitCostModel) to what the
// records of measured runs carry (Record.CPUSeconds) and kept in
// costmodel.json; `go run ./tools/costfit DIR...` refits it.

//go:embed costmodel.json
var costModelJSON []byte

// CostModel is the fitted cost of every method and target kind.
type CostModel struct {
	// Fitted says what the model was fitted to (profiles, machine).
	Fitted string `json:"fitted"`
	// Terms by key, most specific first when looked up: suite/method/
	// variant, method/variant, method; suite/target/KIND and target/KIND
	// for building a task and what it is scored against (KIND exact, nuts
	// or none); "*" pools every
	// unit, for a method the fit never saw.
	Terms map[string]CostTerm `json:"terms"`
}

// CostTerm is one fitted power law.
type CostTerm struct {
	LogA    float64 `json:"log_a"`
	D       float64 `json:"d"`
	N       float64 `json:"n"`
	Work    float64 `json:"work"`
	Samples int     `json:"samples"`
	// RMSLog is the fit's root-mean-square residual in log CPU seconds:
	// 0.2 means a unit's cost is typically within about ±20%.
	RMSLog float64 `json:"rms_log"`
}

// Seconds is the term's CPU seconds at f.
func (t CostTerm) Seconds(f CostFeatures) float64 {
	return math.Exp(t.LogA + t.D*math.Log(f.D) + t.N*math.Log(f.N) + t.Work*math.Log(f.Work))
}

// CostFeatures are what a cost depends on: the task's dimension and
// observation count (each at least 1) and the unit's work, its budget in
// the method's own units (see unitWork).
type CostFeatures struct {
	D, N, Work float64
}

func features(d, n int, work float64) CostFeatures {
	return CostFeatures{D: float64(max(d, 1)), N: float64(max(n, 1)), Work: max(work, 1)}
}

// DefaultCostModel is the model kept in the repository.
func DefaultCostModel() (*CostModel, error) {
	var m CostModel
	if err := json.Unmarshal(costModelJSON, &m); err != nil {
		return nil, fmt.Errorf("bench: costmodel.json: %w", err)
	}
	if _, ok := m.Terms["*"]; !ok {
		return nil, fmt.Errorf("bench: costmodel.json has no pooled term \"*\"")
	}
	return &m, nil
}

// term is the most specific term of the keys, in order; known says
// whether one was found before the pooled fallback.
func (m *CostModel) term(keys ...string) (CostTerm, bool) {
	for _, k := range keys {
		if t, ok := m.Terms[k]; ok {
			return t, true
		}
	}
	return m.Terms["*"], false
}

// costTwins are suites whose units the model prices as another suite's
// when it has no term of their own: the decoders suite runs the synthetic
// suite's tasks with AFIN on other checkpoints, which are not shipped, so
// its runs could not be measured; until they are, its units cost what the
// synthetic suite's AFIN units cost (an underestimate for a costlier
// decoder).
var costTwins = map[string]string{DecodersSuite: "synthetic"}

// unitKeys are the term keys of a unit, most specific first.
func unitKeys(suite, method, variant string) []string {
	keys := []string{suite + "/" + method + "/" + variant}
	if variant != "" {
		keys = append(keys, method+"/"+variant)
	}
	if twin, ok := costTwins[suite]; ok {
		keys = append(keys, twin+"/"+method+"/")
	}
	return append(keys, method)
}

// StandIn says whose term prices units of plan p in suite when not the
// suite's or the method's own: "pooled" (the model has no term for the
// method) or the twin suite's name (costTwins); "" otherwise.
func (m *CostModel) StandIn(suite string, p Plan) string {
	twin := costTwins[suite]
	for _, k := range unitKeys(suite, p.Method, p.Variant) {
		if _, ok := m.Terms[k]; !ok {
			continue
		}
		if twin != "" && strings.HasPrefix(k, twin+"/") {
			return twin
		}
		return ""
	}
	return "pooled"
}

// UnitSeconds is the estimated CPU seconds of a unit of plan p on a task
// of dimension d and n observations; known is false when the model has
// no term for the method (the pooled term is used).
func (m *CostModel) UnitSeconds(suite string, p Plan, d, n int) (seconds float64, known bool) {
	t, known := m.term(unitKeys(suite, p.Method, p.Variant)...)
	return t.Seconds(features(d, n, unitWork(p))), known
}

// TargetSeconds is the estimated CPU seconds of building a task and its
// target of the given kind (targetKind) under profile p.
func (m *CostModel) TargetSeconds(suite, kind string, p *Profile, d, n int) float64 {
	t, _ := m.term(targetKeys(suite, kind)...)
	return t.Seconds(features(d, n, targetWork(kind, p)))
}

// targetKeys are the term keys of a task's target, most specific first.
func targetKeys(suite, kind string) []string {
	keys := []string{suite + "/target/" + kind}
	if twin, ok := costTwins[suite]; ok {
		keys = append(keys, twin+"/target/"+kind)
	}
	return append(keys, "target/"+kind)
}

// unitWork is a unit's budget in its method's own units: the sum of its
// ladder (plus the FRVI steps behind an FRVI+SNIS proposal), times the
// learning rates a VI method sweeps (oracle selection runs one
// trajectory per rate).
func unitWork(p Plan) float64 {
	w := float64(p.Options.FRVISteps)
	if p.Method != methods.FRVISNIS {
		w = 0
	}
	for _, b := range p.Ladder {
		w += float64(b)
	}
	if e, _ := catalog.Lookup(p.Method); e.Family == catalog.VI || p.Method == methods.FRVISNIS {
		w *= float64(max(len(p.Options.VI.LRs), 1))
	}
	return w
}

// Target kinds: what a task's points are scored against, which sets what
// building its target costs.
const (
	targetExact = "exact" // a conjugate task's closed-form posterior
	targetNUTS  = "nuts"  // a long NUTS reference run
	targetNone  = "none"  // no reference: the suite scores otherwise
)

// targetKind is the kind of target a task of setting s (families
// resolved) has in suite su.
func targetKind(su Suite, s Setting) string {
	if _, ok := su.scoring().(byReference); !ok {
		return targetNone
	}
	if isConjugate(s.Prior, s.Likelihood) {
		return targetExact
	}
	return targetNUTS
}

// isConjugate mirrors factor.IsConjugate on family names, so the cost of
// a task's reference is known before the task is built.
func isConjugate(prior, likelihood string) bool {
	gaussPrior := prior == factor.DiagGaussianFamily || prior == factor.FullRankGaussianFamily
	gaussLik := likelihood == factor.LinGaussianFamily || likelihood == factor.GaussianFamily
	return gaussPrior && gaussLik
}

// targetWork is the NUTS iterations of a profile's reference (draws
// plus every chain's warm-up); 1 for the other kinds.
func targetWork(kind string, p *Profile) float64 {
	if kind != targetNUTS || p == nil {
		return 1
	}
	s, err := p.Reference.Resolve()
	if err != nil {
		return 1
	}
	return float64(s.Draws + s.Warmup*s.Chains)
}
