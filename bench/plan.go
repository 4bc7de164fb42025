package bench

import "github.com/afin-bench/afin/records"

// runPlan is the whole plan of a run, every shard's units included, for
// records.WritePlan: what the results directory holds when every shard is
// done, so report and check can say what is missing.
func (r *runner) runPlan(seeds []uint64) *records.Plan {
	cfg := r.cfg
	p := &records.Plan{Suite: cfg.Suite, Profile: cfg.Profile.Name, Shards: max(cfg.Shards, 1)}
	for shard := range p.Shards {
		groups, _ := planGroups(r.settings, seeds, r.plans, r.methods, shard, p.Shards, func(*unit) bool { return false })
		for _, g := range groups {
			for _, u := range g.units {
				pu := records.PlanUnit{Unit: u.key(), Shard: shard}
				for _, s := range u.method.Slots(u.plan.Ladder) {
					pu.Points = append(pu.Points, slotRecord(u, s).Key())
				}
				p.Units = append(p.Units, pu)
			}
		}
	}
	return p
}
