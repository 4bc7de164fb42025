package records

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPlanCompleteness(t *testing.T) {
	// Two shards of two units each, two points per unit.
	plan := &Plan{Suite: "synthetic", Profile: "smoke", Shards: 2}
	var all []Record
	for i, setting := range []string{"a", "b", "c", "d"} {
		u := PlanUnit{Unit: UnitKey("synthetic", setting, 0, "nuts", ""), Shard: i % 2}
		for _, b := range []int{10, 20} {
			r := *rec(setting, 0, b, 0.1)
			all = append(all, r)
			u.Points = append(u.Points, r.Key())
		}
		plan.Units = append(plan.Units, u)
	}
	failed := append([]Record(nil), all...)
	failed[0].Error, failed[0].M1 = "diverged", 0
	for _, tc := range []struct {
		name  string
		recs  []Record
		want  string
		units int
	}{
		{"all there", all, "complete: 4 of 4 units", 4},
		{"a failure is an outcome", failed, "complete: 4 of 4 units", 4},
		{"one record deleted", all[1:], "incomplete: 3 of 4 units (suite synthetic, profile smoke, 2 shards); first missing: synthetic|a|0|nuts| (1 of 2 points)", 3},
		{"one shard only", []Record{all[0], all[1], all[4], all[5]}, "incomplete: 2 of 4 units (suite synthetic, profile smoke, 2 shards); no record of shard(s) 1; first missing: synthetic|b|0|nuts| (2 of 2 points)", 2},
		{"nothing", nil, "incomplete: 0 of 4 units (suite synthetic, profile smoke, 2 shards); no record of shard(s) 0, 1", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := PlanCompleteness(tc.recs, plan)
			if c.Done != tc.units || !strings.HasPrefix(c.String(), tc.want) {
				t.Errorf("got %d done, %q; want %d, %q", c.Done, c, tc.units, tc.want)
			}
		})
	}
}

// WritePlan merges the units of one run's parts, replaces another run's
// plan, and Load finds plans in subdirectories.
func TestWritePlan(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "synthetic")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	part := func(units ...string) *Plan {
		p := &Plan{Suite: "decoders", Profile: "quick", Shards: 1}
		for _, u := range units {
			p.Units = append(p.Units, PlanUnit{Unit: u, Points: []string{u + "|p"}})
		}
		return p
	}
	for _, p := range []*Plan{part("g1", "g2"), part("f1", "g2")} {
		if err := WritePlan(sub, p); err != nil {
			t.Fatal(err)
		}
	}
	l, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Plans) != 1 || len(l.Plans[0].Units) != 3 {
		t.Fatalf("plans %+v, want one of 3 units", l.Plans)
	}
	if got := l.Incomplete(); len(got) != 1 || !strings.HasPrefix(got[0], "incomplete: 0 of 3 units") {
		t.Errorf("Incomplete = %q", got)
	}
	// Another profile's run replaces the plan.
	other := part("x")
	other.Profile = "paper"
	if err := WritePlan(sub, other); err != nil {
		t.Fatal(err)
	}
	if l, err = Load(dir); err != nil || len(l.Plans) != 1 || l.Plans[0].Profile != "paper" || len(l.Plans[0].Units) != 1 {
		t.Errorf("after another profile's run: %v, %+v", err, l.Plans)
	}
	if err := os.WriteFile(filepath.Join(sub, "bad"+PlanSuffix), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "bad"+PlanSuffix) {
		t.Errorf("a broken plan file: %v", err)
	}
}
