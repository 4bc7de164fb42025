package records

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/afin-bench/afin/internal/atomicfile"
)

// A run's plan is every unit a results directory should hold when the run
// is done, and the points (record keys) of each: bench writes it beside
// the results before it runs a unit (WritePlan), and report, check and
// bench compare the records with it (Completeness). The plan covers every
// shard, so a directory that holds one shard's results of a 2-shard plan
// reads as incomplete, and so does one with a record deleted. Every shard
// writes the same plan to the same file (PlanFileName); a directory
// written before plans existed has none, and its completeness is unknown.

// PlanSuffix ends the name of every plan file.
const PlanSuffix = ".plan.json"

// PlanFileName is the plan file of a suite's run in its results
// directory, the same for every shard of the run.
func PlanFileName(suite string) string { return suite + PlanSuffix }

// Plan is what a run of one suite under one profile should leave.
type Plan struct {
	Suite   string     `json:"suite"`
	Profile string     `json:"profile"`
	Shards  int        `json:"shards"` // 1 when unsharded
	Units   []PlanUnit `json:"units"`
}

// PlanUnit is one planned unit: its UnitKey, the shard that runs it and
// the Key of every record it writes when it completes.
type PlanUnit struct {
	Unit   string   `json:"unit"`
	Shard  int      `json:"shard"`
	Points []string `json:"points"`
}

// WritePlan writes p into dir as PlanFileName(p.Suite), atomically, so a
// reader never sees half a plan. A plan already there for the same profile
// and shard count is merged with p (mergePlans); one of another profile or
// shard count is replaced: the latest run says what the directory should
// hold (bench warns when a directory mixes profiles).
func WritePlan(dir string, p *Plan) error {
	path := filepath.Join(dir, PlanFileName(p.Suite))
	if old, err := readPlanFile(path); err == nil && old.Profile == p.Profile && old.Shards == p.Shards {
		p = mergePlans(old, p)
	}
	data, err := json.Marshal(p)
	if err != nil {
		return fmt.Errorf("writing plan: %w", err)
	}
	if err := atomicfile.WriteFile(path, append(data, '\n')); err != nil {
		return fmt.Errorf("writing plan: %w", err)
	}
	return nil
}

// mergePlans is the union of two plans of one run by unit, b's units
// replacing a's: a suite that runs in parts into one directory (the
// decoders suite, one decoder after the other) plans every part.
func mergePlans(a, b *Plan) *Plan {
	out := &Plan{Suite: b.Suite, Profile: b.Profile, Shards: b.Shards}
	inB := make(map[string]bool, len(b.Units))
	for _, u := range b.Units {
		inB[u.Unit] = true
	}
	for _, u := range a.Units {
		if !inB[u.Unit] {
			out.Units = append(out.Units, u)
		}
	}
	out.Units = append(out.Units, b.Units...)
	return out
}

func readPlanFile(path string) (*Plan, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var p Plan
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, fmt.Errorf("%s: not a plan: %w", path, err)
	}
	if p.Suite == "" || p.Shards < 1 {
		return nil, fmt.Errorf("%s: not a plan: no suite or shard count", path)
	}
	return &p, nil
}

// ReadPlans reads every plan file under dir (subdirectories too, hidden
// ones skipped, as Load reads results), sorted by path. A file that is not
// a plan is an error naming it.
func ReadPlans(dir string) ([]*Plan, error) {
	paths, err := filesUnder(dir, PlanSuffix)
	if err != nil {
		return nil, fmt.Errorf("reading plans: %w", err)
	}
	var out []*Plan
	for _, path := range paths {
		p, err := readPlanFile(path)
		if err != nil {
			return nil, fmt.Errorf("reading plans: %w", err)
		}
		out = append(out, p)
	}
	return out, nil
}

// Completeness is how much of one plan the records hold.
type Completeness struct {
	Suite, Profile string
	Shards         int
	Units          int // planned units
	Done           int // units with a record (scored or failed) at every point
	// Missing are the first few units not done, each with how many of its
	// points are missing; MissingShards the shards none of whose units has
	// a record (a shard never run, or its file lost).
	Missing       []string
	MissingShards []int
}

// Complete reports whether every planned unit is done.
func (c Completeness) Complete() bool { return c.Done == c.Units }

// String is the line report and check print: "incomplete: X of Y units …"
// or "complete: Y units …".
func (c Completeness) String() string {
	what := fmt.Sprintf("suite %s, profile %s", c.Suite, c.Profile)
	if c.Shards > 1 {
		what += fmt.Sprintf(", %d shards", c.Shards)
	}
	if c.Complete() {
		return fmt.Sprintf("complete: %d of %d units (%s)", c.Done, c.Units, what)
	}
	s := fmt.Sprintf("incomplete: %d of %d units (%s)", c.Done, c.Units, what)
	if len(c.MissingShards) > 0 {
		s += fmt.Sprintf("; no record of shard(s) %s", joinInts(c.MissingShards))
	}
	if len(c.Missing) > 0 {
		s += "; first missing: " + strings.Join(c.Missing, ", ")
	}
	return s
}

// maxMissing bounds the units a Completeness names.
const maxMissing = 3

// PlanCompleteness compares recs with p: a unit is done when every point
// it plans has a record, scored or failed (a failure is an outcome; the
// report lists it).
func PlanCompleteness(recs []Record, p *Plan) Completeness {
	have := make(map[string]bool, len(recs))
	for i := range recs {
		have[recs[i].Key()] = true
	}
	c := Completeness{Suite: p.Suite, Profile: p.Profile, Shards: p.Shards, Units: len(p.Units)}
	shardSeen := make([]bool, p.Shards)
	for _, u := range p.Units {
		got := 0
		for _, k := range u.Points {
			if have[k] {
				got++
			}
		}
		if got > 0 && u.Shard >= 0 && u.Shard < p.Shards {
			shardSeen[u.Shard] = true
		}
		if got == len(u.Points) {
			c.Done++
			continue
		}
		if len(c.Missing) < maxMissing {
			c.Missing = append(c.Missing, fmt.Sprintf("%s (%d of %d points)", u.Unit, len(u.Points)-got, len(u.Points)))
		}
	}
	if c.Done < c.Units {
		for i, seen := range shardSeen {
			if !seen {
				c.MissingShards = append(c.MissingShards, i)
			}
		}
	}
	return c
}

// Completeness compares the records with every plan found beside them,
// in the plans' order (empty when the directory has no plan).
func (l *Loaded) Completeness() []Completeness {
	out := make([]Completeness, 0, len(l.Plans))
	for _, p := range l.Plans {
		out = append(out, PlanCompleteness(l.Records, p))
	}
	return out
}

// Incomplete is the String of every incomplete plan of l, for the top of
// a report and for stderr.
func (l *Loaded) Incomplete() []string {
	var out []string
	for _, c := range l.Completeness() {
		if !c.Complete() {
			out = append(out, c.String())
		}
	}
	return out
}

func joinInts(xs []int) string {
	sort.Ints(xs)
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}
