package bench

import "github.com/afin-bench/afin/records"

// runPlan is the whole plan of a run, every shard's units included, for
// records.WritePlan: what the results directory holds when every shard is
// done, so report and check can say what is missing. Every suite runs
// through the session, so every suite writes one.
func (r *session) runPlan() *records.Plan {
	cfg := r.cfg
	p := &records.Plan{Suite: cfg.Suite, Profile: cfg.Profile.Name, Shards: max(cfg.Shards, 1)}
	groups, _ := planGroups(r.settings, r.seeds, r.plans, r.suite.Families, nil, 0, func(*unit) bool { return false })
	for _, g := range groups {
		for _, u := range g.units {
			pu := records.PlanUnit{Unit: u.key(), Shard: r.shards.shardOf(shardKey(g.setting, g.seed), u.plan)}
			for _, s := range r.slots(u) {
				pu.Points = append(pu.Points, slotRecord(u, s).Key())
			}
			p.Units = append(p.Units, pu)
		}
	}
	return p
}
