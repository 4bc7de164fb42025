package bench

import (
	"fmt"
	"slices"
	"sort"
)

// EstimateConfig is one `afin bench --estimate` of a suite.
type EstimateConfig struct {
	Suite   string
	Profile *Profile
	Seeds   []uint64 // nil: the profile's
	Methods []string // nil: the suite's default methods
	Shards  int      // ≤ 1: unsharded
	Model   *CostModel
}

// Estimate is what a run of a suite will cost, from the cost model,
// before anything runs.
type Estimate struct {
	Suite, Profile string
	Tasks, Units   int
	// Methods are the units' costs by plan (method and variant), in the
	// suite's plan order.
	Methods []MethodEstimate
	// Targets is the cost of building the tasks and their references, by
	// target kind (exact, nuts, none).
	Targets map[string]float64
	Total   float64 // CPU seconds, methods and targets
	// Shards, with the largest shard's and the mean shard's estimated CPU
	// seconds and the shards left with nothing to run; 1 when unsharded.
	Shards        int
	Largest, Mean float64
	Empty         int
}

// MethodEstimate is one plan's part of an Estimate; StandIn says whose
// cost term prices it when not its own (CostModel.StandIn).
type MethodEstimate struct {
	Method, Variant string
	Units           int
	Seconds         float64
	StandIn         string
}

// Ratio is the largest shard over the mean shard.
func (e *Estimate) Ratio() float64 {
	if e.Mean == 0 {
		return 1
	}
	return e.Largest / e.Mean
}

// EstimateSuite estimates a suite's run under cfg without running or
// building anything: its settings, seeds and plans, each unit's cost and
// each task's target's from the cost model, and the shard partition a run
// with cfg.Shards would use. It refuses more shards than units, as a run
// does.
func EstimateSuite(cfg EstimateConfig) (*Estimate, error) {
	su, err := lookupSuite(cfg.Suite)
	if err != nil {
		return nil, err
	}
	m := cfg.Model
	if m == nil {
		if m, err = DefaultCostModel(); err != nil {
			return nil, err
		}
	}
	settings, err := su.Settings(cfg.Profile)
	if err != nil {
		return nil, err
	}
	sort.SliceStable(settings, func(i, j int) bool { return settings[i].Key < settings[j].Key })
	seeds, _ := su.Seeds(cfg.Profile, cfg.Seeds)
	all := cfg.Profile.plansOf(su)
	if err := checkWanted(all, cfg.Methods); err != nil {
		return nil, err
	}
	var defaults, chosen []Plan
	for _, p := range all {
		if !p.OptIn {
			defaults = append(defaults, p)
		}
		if (len(cfg.Methods) == 0 && !p.OptIn) || slices.Contains(cfg.Methods, p.Method) {
			chosen = append(chosen, p)
		}
	}
	shards := max(cfg.Shards, 1)
	sm, err := partition(costTasks(su, cfg.Profile, m, settings, seeds, defaults), shards)
	if err != nil {
		return nil, err
	}
	e := &Estimate{Suite: su.Info().Name, Profile: cfg.Profile.Name, Targets: map[string]float64{}, Shards: shards}
	loads := make([]float64, shards)
	e.addUnits(su, cfg.Profile, m, sm, settings, seeds, chosen, loads)
	for _, l := range loads {
		e.Largest = max(e.Largest, l)
		if l == 0 {
			e.Empty++
		}
	}
	e.Mean = e.Total / float64(shards)
	return e, nil
}

// addUnits books every unit of the chosen plans and every task's target
// (once per shard that runs a unit of the task) into e and the shards'
// loads.
func (e *Estimate) addUnits(su Suite, prof *Profile, m *CostModel, sm *shardMap, settings []Setting, seeds []uint64, plans []Plan, loads []float64) {
	e.Methods = make([]MethodEstimate, len(plans))
	for j, p := range plans {
		e.Methods[j] = MethodEstimate{Method: p.Method, Variant: p.Variant, StandIn: m.StandIn(e.Suite, p)}
	}
	for _, s := range settings {
		for i, seed := range seeds {
			rs := s
			rs.Prior, rs.Likelihood = su.Families(s, seed)
			key := shardKey(s, seed)
			kind := targetKind(su, rs)
			target := m.TargetSeconds(e.Suite, kind, prof, s.D, s.N)
			built := map[int]bool{}
			for j, p := range plans {
				if p.Tasks > 0 && i >= p.Tasks {
					continue
				}
				c, _ := m.UnitSeconds(e.Suite, p, s.D, s.N)
				sh := sm.shardOf(key, p)
				e.Methods[j].Units++
				e.Methods[j].Seconds += c
				e.Units++
				loads[sh] += c
				e.Total += c
				if !built[sh] {
					built[sh] = true
					loads[sh] += target
					e.Targets[kind] += target
					e.Total += target
				}
			}
			if len(built) > 0 {
				e.Tasks++
			}
		}
	}
}

// ShardsFor is the fewest shards whose largest shard is estimated at no
// more than limit CPU seconds, with that estimate; an error when even one
// unit per shard exceeds it.
func ShardsFor(cfg EstimateConfig, limit float64) (*Estimate, error) {
	one := cfg
	one.Shards = 1
	e, err := EstimateSuite(one)
	if err != nil {
		return nil, err
	}
	if e.Largest <= limit {
		return e, nil
	}
	// The largest shard shrinks, by and large, as shards are added: bisect
	// on the count. Every count returned was checked against the limit.
	lo, hi := 1, e.Units
	cfg.Shards = hi
	top, err := EstimateSuite(cfg)
	if err != nil {
		return nil, err
	}
	if top.Largest > limit {
		return nil, fmt.Errorf("suite %s: even %d shards (one unit each) leave a shard of %.2f CPU-hours, over the limit of %.2f", e.Suite, hi, top.Largest/3600, limit/3600)
	}
	best := top
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		cfg.Shards = mid
		got, err := EstimateSuite(cfg)
		if err != nil {
			return nil, err
		}
		if got.Largest <= limit {
			hi, best = mid, got
		} else {
			lo = mid
		}
	}
	return best, nil
}
