package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/afin-bench/afin/baselines/vi"
	"github.com/afin-bench/afin/factor"
	"github.com/afin-bench/afin/methods"
	"github.com/afin-bench/afin/posterior"
	"github.com/afin-bench/afin/records"
)

func TestParseShard(t *testing.T) {
	tests := []struct {
		in      string
		i, n    int
		wantErr bool
	}{
		{"", 0, 1, false},
		{"0/1", 0, 1, false},
		{"2/3", 2, 3, false},
		{"3/3", 0, 0, true},
		{"-1/3", 0, 0, true},
		{"1/0", 0, 0, true},
		{"1", 0, 0, true},
		{"a/b", 0, 0, true},
	}
	for _, tc := range tests {
		i, n, err := ParseShard(tc.in)
		if (err != nil) != tc.wantErr {
			t.Errorf("ParseShard(%q) error = %v, want error %v", tc.in, err, tc.wantErr)
			continue
		}
		if err == nil && (i != tc.i || n != tc.n) {
			t.Errorf("ParseShard(%q) = %d/%d, want %d/%d", tc.in, i, n, tc.i, tc.n)
		}
	}
}

// Every unit lands in exactly one shard, for any shard count, and the
// shards are not wildly unbalanced.
func TestSuiteSettings(t *testing.T) {
	syn, err := Settings("synthetic")
	if err != nil {
		t.Fatal(err)
	}
	if len(syn) != 48 {
		t.Fatalf("synthetic has %d settings, want 48", len(syn))
	}
	seen := map[string]bool{}
	perGroup := map[string]int{}
	for _, s := range syn {
		if seen[s.Key] {
			t.Errorf("duplicate key %s", s.Key)
		}
		seen[s.Key] = true
		perGroup[s.Group]++
		want := map[string][2]int{"easy": {4, 256}, "medium": {8, 64}, "hard": {16, 1}}[s.Group]
		if s.D != want[0] || s.N != want[1] || s.Design != "iid" {
			t.Errorf("%s: d=%d N=%d design=%s", s.Key, s.D, s.N, s.Design)
		}
	}
	if !reflect.DeepEqual(perGroup, map[string]int{"easy": 16, "medium": 16, "hard": 16}) {
		t.Errorf("groups %v", perGroup)
	}
	if _, err := Settings("nope"); err == nil {
		t.Error("unknown suite accepted")
	}
}

// The extrapolation family assignment: each split's six runs use six
// different prior × likelihood pairs and the 18 runs cover all 16.
func TestExtrapolationFamilies(t *testing.T) {
	ex, err := Settings("extrapolation")
	if err != nil {
		t.Fatal(err)
	}
	if len(ex) != 6 {
		t.Fatalf("%d configs, want 6", len(ex))
	}
	all := map[string]bool{}
	split := map[string]map[string]bool{}
	for _, s := range ex {
		for seed := uint64(0); seed < 3; seed++ {
			p, l := extrapolationSuite{}.Families(s, seed)
			pair := p + "|" + l
			all[pair] = true
			if split[s.Group] == nil {
				split[s.Group] = map[string]bool{}
			}
			if split[s.Group][pair] {
				t.Errorf("split %s repeats %s", s.Group, pair)
			}
			split[s.Group][pair] = true
		}
	}
	if len(all) != 16 {
		t.Errorf("runs cover %d of 16 prior × likelihood pairs", len(all))
	}
}

// A simulated setting is one fixed task per seed: the same in every call
// and process, different across seeds, with the setting's sizes and
// families.
func TestSimTaskDeterministic(t *testing.T) {
	syn, _ := Settings("synthetic")
	ex, _ := Settings("extrapolation")
	for _, s := range []Setting{syn[0], syn[21], syn[47], ex[3]} {
		st, err := lookupSuite(s.Suite)
		if err != nil {
			t.Fatal(err)
		}
		a, err := st.Task(&Config{}, s, 1)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := st.Task(&Config{}, s, 1)
		c, _ := st.Task(&Config{}, s, 2)
		ja, _ := factor.MarshalTask(a)
		jb, _ := factor.MarshalTask(b)
		jc, _ := factor.MarshalTask(c)
		if !bytes.Equal(ja, jb) {
			t.Errorf("%s: two draws of seed 1 differ", s.Key)
		}
		if bytes.Equal(ja, jc) {
			t.Errorf("%s: seeds 1 and 2 give the same task", s.Key)
		}
		prior, lik := st.Families(s, 1)
		if a.D != s.D || a.N() != s.N || a.Prior.Family() != prior {
			t.Errorf("%s: task d=%d N=%d prior=%s", s.Key, a.D, a.N(), a.Prior.Family())
		}
		for _, f := range a.Factors {
			if f.Family() != lik {
				t.Fatalf("%s: factor family %s, want %s", s.Key, f.Family(), lik)
			}
		}
	}
	// The snis suite scores the very tasks of the synthetic suite.
	sn, _ := Settings("snis")
	a, _ := SimTask(syn[5], 0)
	b, _ := SimTask(sn[5], 0)
	ja, _ := factor.MarshalTask(a)
	jb, _ := factor.MarshalTask(b)
	if !bytes.Equal(ja, jb) {
		t.Error("snis and synthetic tasks differ for the same setting")
	}
}

func TestProfiles(t *testing.T) {
	for _, name := range ProfileNames() {
		p, err := GetProfile(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, suite := range []string{"synthetic", "snis", "extrapolation", "uci"} {
			plans := p.Plans(suite)
			if len(plans) == 0 {
				t.Errorf("%s/%s: no plans", name, suite)
			}
			for _, pl := range plans {
				if len(pl.Ladder) == 0 {
					t.Errorf("%s/%s/%s: empty ladder", name, suite, pl.Method)
				}
				for i := 1; i < len(pl.Ladder); i++ {
					if pl.Ladder[i] <= pl.Ladder[i-1] {
						t.Errorf("%s/%s/%s: ladder %v not increasing", name, suite, pl.Method, pl.Ladder)
					}
				}
			}
		}
	}
	paper, _ := GetProfile("paper")
	if lrs := paper.PaperFRVILRs; len(lrs) != 7 || math.Abs(lrs[0]/1e-6-1) > 1e-12 || math.Abs(lrs[6]/1e-2-1) > 1e-12 {
		t.Errorf("paper learning rates %v, want 7 from 1e-6 to 1e-2", lrs)
	}
	ref, err := paper.Reference.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	if paper.SNISProposals[len(paper.SNISProposals)-1] != 10_000_000 || ref.Draws != 1_000_000 || ref.Warmup != 10_000 {
		t.Error("paper profile lost the paper's budgets")
	}
	if _, err := GetProfile("huge"); err == nil {
		t.Error("unknown profile accepted")
	}
}

// fakeMethod draws from N(0, I) (plus a per-budget shift so points
// differ), deterministically from the job seed; with limit > 0 it
// cancels the run after that many points, as an interrupt would.
type fakeMethod struct {
	name   string
	cancel func()
	count  *int
	limit  int
}

func (m fakeMethod) Name() string                      { return m.name }
func (m fakeMethod) Kind() string                      { return methods.KindDraws }
func (m fakeMethod) Slots(ladder []int) []methods.Slot { return fakeSlots(ladder) }

func fakeSlots(ladder []int) []methods.Slot {
	var out []methods.Slot
	for _, b := range ladder {
		out = append(out, methods.Slot{Kind: methods.KindDraws, Budget: b})
	}
	return out
}

func (m fakeMethod) Run(ctx context.Context, job *methods.Job, emit func(methods.Point) error) error {
	for _, b := range job.Ladder {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		rng := rand.New(rand.NewPCG(job.Seed, uint64(b)))
		z := make([]float64, b*job.Task.D)
		for i := range z {
			z[i] = rng.NormFloat64()
		}
		pt := methods.Point{Slot: methods.Slot{Kind: methods.KindDraws, Budget: b}, Draws: &posterior.Draws{D: job.Task.D, Z: z}, Seconds: 0.001}
		if err := emit(pt); err != nil {
			return err
		}
		if m.count != nil {
			*m.count++
			if m.limit > 0 && *m.count >= m.limit {
				m.cancel()
			}
		}
	}
	return nil
}

func fakeConfig(dir string, factory MethodFactory) Config {
	p, _ := GetProfile("smoke")
	p.NUTSDraws = []int{50, 100}
	p.FRVISteps = []int{20, 40}
	return Config{
		Suite: "synthetic", Profile: p, Results: dir, Seeds: []uint64{0, 1},
		Methods:   []string{"frvi", "nuts"},
		NewMethod: factory,
		BuildTask: func(s Setting, seed uint64) (*factor.Task, error) {
			return &factor.Task{Name: s.Key, D: 2, Prior: &factor.DiagGaussian{Loc: []float64{0, 0}, Scale: []float64{1, 1}}}, nil
		},
		Reference: func(ctx context.Context, task *factor.Task, p *Profile) (*Reference, error) {
			rng := rand.New(rand.NewPCG(1, 2))
			z := make([]float64, 400)
			for i := range z {
				z[i] = rng.NormFloat64()
			}
			return &Reference{Draws: &posterior.Draws{D: 2, Z: z}, Info: records.RefInfo{Kind: "fake"}}, nil
		},
	}
}

func metricsByKey(t *testing.T, dir string) map[string][3]float64 {
	t.Helper()
	recs, err := records.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][3]float64{}
	for _, r := range recs {
		out[r.Key()] = [3]float64{float64(r.M1), float64(r.M2), float64(r.SW2)}
	}
	return out
}

// An interrupted run resumes: the union of the two runs is exactly the
// uninterrupted run's record set with the same values, no unit that was
// finished is run again, and shards merge to the whole.
func TestRunResumeAndShards(t *testing.T) {
	factories := func(count *int, limit int, cancel func()) MethodFactory {
		return func(name string, _ *methods.Env) (methods.Method, error) {
			if name != "nuts" && name != "frvi" {
				return nil, fmt.Errorf("%w: not faked", methods.ErrUnavailable)
			}
			return fakeMethod{name: name, count: count, limit: limit, cancel: cancel}, nil
		}
	}
	full := t.TempDir()
	sum, err := Run(context.Background(), fakeConfig(full, factories(nil, 0, nil)))
	if err != nil {
		t.Fatal(err)
	}
	// 48 settings × 2 seeds × 2 methods, 2 budgets each.
	if sum.Units != 192 || sum.Records != 384 {
		t.Fatalf("full run: %+v", sum)
	}
	want := metricsByKey(t, full)

	part := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	isum, err := Run(ctx, fakeConfig(part, factories(&n, 101, cancel)))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted run returned %v", err)
	}
	if isum.Failed != 0 {
		t.Errorf("interrupted run counted %d failed units; an interrupted unit is not a failure", isum.Failed)
	}
	if l, err := records.Load(part); err != nil || len(l.Failures()) != 0 {
		t.Errorf("interrupted run left failed records (%v): an interrupted unit leaves none", err)
	}
	got := metricsByKey(t, part)
	if len(got) == 0 || len(got) >= len(want) {
		t.Fatalf("interrupted run stored %d of %d records", len(got), len(want))
	}
	n2 := 0
	sum2, err := Run(context.Background(), fakeConfig(part, factories(&n2, 0, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if sum2.Skipped == 0 || n2 >= 384 {
		t.Errorf("resume redid finished work: %+v, %d points", sum2, n2)
	}
	if got := metricsByKey(t, part); !reflect.DeepEqual(got, want) {
		t.Fatalf("resumed store differs from the uninterrupted one (%d vs %d records)", len(got), len(want))
	}
	data, _ := os.ReadFile(filepath.Join(part, "synthetic.jsonl"))
	if lines := strings.Count(string(data), "\n"); lines != len(want) {
		t.Errorf("resumed file has %d lines for %d records: duplicates", lines, len(want))
	}

	sharded := t.TempDir()
	for i := range 3 {
		cfg := fakeConfig(sharded, factories(nil, 0, nil))
		cfg.Shard, cfg.Shards = i, 3
		if _, err := Run(context.Background(), cfg); err != nil {
			t.Fatal(err)
		}
	}
	files, _ := filepath.Glob(filepath.Join(sharded, "*.jsonl"))
	if len(files) != 3 {
		t.Errorf("3 shards wrote %d files", len(files))
	}
	if got := metricsByKey(t, sharded); !reflect.DeepEqual(got, want) {
		t.Fatalf("merged shards differ from the unsharded run (%d vs %d records)", len(got), len(want))
	}
}

func TestResolveMethods(t *testing.T) {
	p, _ := GetProfile("smoke")
	plans := p.Plans("synthetic")
	broken := func(name string, env *methods.Env) (methods.Method, error) {
		switch name {
		case "nuts":
			return methods.New(name, env)
		case "afin":
			return nil, fmt.Errorf("%w: no checkpoint", methods.ErrUnavailable)
		}
		return nil, fmt.Errorf("%w: not in this test", methods.ErrUnavailable)
	}
	ms, notes, err := ResolveMethods(plans, nil, &methods.Env{}, broken)
	if err != nil || len(ms) != 4 || ms["nuts"] == nil || ms["afin"] == nil {
		t.Fatalf("got %v %v", ms, err)
	}
	sort.Strings(notes)
	if len(notes) != 3 || !strings.Contains(strings.Join(notes, ";"), "no checkpoint") {
		t.Errorf("notes %q", notes)
	}
	// A method asked for by the suite but unable to run is a failed unit
	// with the reason, never a skipped one.
	if err := ms["afin"].Run(context.Background(), nil, nil); err == nil || !strings.Contains(err.Error(), "no checkpoint") {
		t.Errorf("unavailable afin ran: %v", err)
	}
	tests := []struct {
		name  string
		want  []string
		build MethodFactory
		is    error
	}{
		{"explicitly requested unavailable method", []string{"afin"}, broken, methods.ErrUnavailable},
		{"method outside the suite", []string{"frvi-snis"}, broken, ErrNotInSuite},
		{"failure other than unavailability", nil, func(string, *methods.Env) (methods.Method, error) { return nil, errors.New("boom") }, nil},
	}
	for _, tc := range tests {
		_, _, err := ResolveMethods(plans, tc.want, &methods.Env{}, tc.build)
		if err == nil || (tc.is != nil && !errors.Is(err, tc.is)) {
			t.Errorf("%s: got %v", tc.name, err)
		}
	}
}

// The flow VI baselines are part of the synthetic suite only on request.
func TestResolveMethodsOptIn(t *testing.T) {
	p, _ := GetProfile("smoke")
	plans := p.Plans("synthetic")
	noNet := func(name string, env *methods.Env) (methods.Method, error) {
		if strings.HasPrefix(name, "afin") {
			return nil, fmt.Errorf("%w: no network in this test", methods.ErrUnavailable)
		}
		return methods.New(name, env)
	}
	all, _, err := ResolveMethods(plans, nil, &methods.Env{}, noNet)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"iaf", "maf", "nsf"} {
		if all[k] != nil {
			t.Errorf("%s ran on the synthetic suite without being asked for", k)
		}
	}
	ms, _, err := ResolveMethods(plans, []string{"iaf", "nuts"}, &methods.Env{}, noNet)
	if err != nil || ms["iaf"] == nil || ms["nuts"] == nil || len(ms) != 2 {
		t.Fatalf("--methods iaf,nuts on synthetic: got %v, %v", ms, err)
	}
}

func TestUCISettings(t *testing.T) {
	us := UCISettings()
	if len(us) != 12 {
		t.Fatalf("%d UCI settings, want 12", len(us))
	}
	seen := map[string]bool{}
	for _, s := range us {
		if seen[s.Key] || s.Dataset != s.Key || s.Group != s.Key || s.D < 1 || s.N < 1 {
			t.Errorf("bad UCI setting %+v", s)
		}
		seen[s.Key] = true
	}
	p, _ := GetProfile("quick")
	methods := map[string]bool{}
	for _, pl := range p.Plans("uci") {
		methods[pl.Method] = true
	}
	for _, m := range []string{"afin", "afin-snis", "nuts", "frvi", "iaf", "maf", "nsf"} {
		if !methods[m] {
			t.Errorf("uci suite lacks %s", m)
		}
	}
}

// A second writer of a results file is refused before any work.
func TestRunRefusesALockedDirectory(t *testing.T) {
	dir := t.TempDir()
	held, err := records.OpenStore(dir, ResultsFileName("synthetic", 0, 1))
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	built := 0
	factory := func(name string, env *methods.Env) (methods.Method, error) {
		built++
		return methods.New(name, env)
	}
	_, err = Run(context.Background(), fakeConfig(dir, factory))
	if !errors.Is(err, records.ErrLocked) || built != 0 {
		t.Fatalf("second writer: %v after building %d methods; want ErrLocked before any", err, built)
	}
}

// failingMethod emits fakeMethod's points up to (not including) budget
// failAt, then fails.
type failingMethod struct {
	fakeMethod
	failAt int
}

func (m failingMethod) Run(ctx context.Context, job *methods.Job, emit func(methods.Point) error) error {
	err := m.fakeMethod.Run(ctx, job, func(p methods.Point) error {
		if p.Budget >= m.failAt {
			return errors.New("sampler diverged")
		}
		return emit(p)
	})
	return err
}

// A unit that fails leaves a failed record, with the reason, at each slot
// it did not fill: a method erring before or after its first point, and a
// method the suite asks for that cannot run here (at the slots it would
// have filled). The run reports the failures but finishes; a resume does
// not rerun them; --retry-failed does, once the method works, and its
// success supersedes the failures.
func TestFailedUnitsLeaveRecords(t *testing.T) {
	cases := []struct {
		name, method string
		build        func(name string) (methods.Method, error)
		wantFailed   []int // budgets with a failed record
		wantReason   string
	}{
		{"error before any point", "nuts", func(n string) (methods.Method, error) { return failingMethod{fakeMethod{name: n}, 0}, nil },
			[]int{50, 100}, "sampler diverged"},
		{"error after the first point", "nuts", func(n string) (methods.Method, error) { return failingMethod{fakeMethod{name: n}, 100}, nil },
			[]int{100}, "sampler diverged"},
		{"unavailable method", "afin", func(string) (methods.Method, error) {
			return nil, fmt.Errorf("%w: no checkpoint here", methods.ErrUnavailable)
		}, []int{500}, "no checkpoint here"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			broken := true
			cfg := fakeConfig(dir, func(name string, env *methods.Env) (methods.Method, error) {
				if name == tc.method && broken {
					return tc.build(name)
				}
				return fakeMethod{name: name}, nil
			})
			all, _ := Settings("synthetic")
			cfg.Methods, cfg.Settings, cfg.Seeds = nil, all[:1], []uint64{0}
			sum, err := Run(context.Background(), cfg)
			if err == nil || !strings.Contains(err.Error(), tc.wantReason) || sum.Failed != 1 || sum.Ran != sum.Units-1 {
				t.Fatalf("run: %v, summary %+v; want 1 failed unit naming the reason, the others run", err, sum)
			}
			checkFailed(t, dir, tc.method, tc.wantFailed, tc.wantReason)

			sum, err = Run(context.Background(), cfg)
			if err != nil || sum.Ran != 0 || sum.Failed != 0 || sum.PrevFailed != 1 {
				t.Fatalf("resume: %v, summary %+v; want nothing rerun, 1 unit failed earlier", err, sum)
			}
			broken, cfg.RetryFailed = false, true
			sum, err = Run(context.Background(), cfg)
			if err != nil || sum.Ran != 1 || sum.Records != len(tc.wantFailed) {
				t.Fatalf("retry: %v, summary %+v; want the failed unit rerun, its failed slots recorded", err, sum)
			}
			checkFailed(t, dir, tc.method, nil, "")
		})
	}
}

// checkFailed checks that method's failed records in dir are at budgets
// want, each naming reason, and that nothing conflicts.
func checkFailed(t *testing.T, dir, method string, want []int, reason string) {
	t.Helper()
	l, err := records.Load(dir)
	if err != nil || l.ConflictError() != nil {
		t.Fatalf("load: %v, %v", err, l.ConflictError())
	}
	var got []int
	for _, r := range l.Failures() {
		if r.Method != method || !strings.Contains(r.Error, reason) {
			t.Errorf("failed record %s: %q", r.Key(), r.Error)
		}
		got = append(got, r.Budget)
	}
	sort.Ints(got)
	if !slices.Equal(got, want) {
		t.Errorf("failed records at budgets %v, want %v", got, want)
	}
}

// flaggedMethod emits fakeMethod's points carrying warning flags.
type flaggedMethod struct{ fakeMethod }

func (m flaggedMethod) Run(ctx context.Context, job *methods.Job, emit func(methods.Point) error) error {
	return m.fakeMethod.Run(ctx, job, func(p methods.Point) error {
		p.Diagnostics.Flags = methods.NotConverged("ELBO still improving")
		p.Diagnostics.Flags.OutsideSupport = "d=16 outside [1, 8]"
		return emit(p)
	})
}

// The flags a method raises reach every record it writes: by name with
// why, and in words.
func TestRecordsCarryFlags(t *testing.T) {
	dir := t.TempDir()
	cfg := fakeConfig(dir, func(name string, _ *methods.Env) (methods.Method, error) {
		return flaggedMethod{fakeMethod{name: name}}, nil
	})
	all, _ := Settings("synthetic")
	cfg.Settings, cfg.Seeds, cfg.Methods = all[:1], []uint64{0}, []string{"frvi"}
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	recs, err := records.ReadDir(dir)
	if err != nil || len(recs) == 0 {
		t.Fatalf("%d records, %v", len(recs), err)
	}
	for _, r := range recs {
		if r.NotConverged != "ELBO still improving" || r.OutsideSupport != "d=16 outside [1, 8]" {
			t.Errorf("record %s: flags %q, %q", r.Key(), r.NotConverged, r.OutsideSupport)
		}
		if r.Flags["not_converged"] != "ELBO still improving" || r.Flags["outside_support"] != "d=16 outside [1, 8]" || len(r.Warnings) != len(r.Flags) {
			t.Errorf("record %s: flags %v, warnings %q", r.Key(), r.Flags, r.Warnings)
		}
	}
}

// Under the paper's VI protocol the VI plans carry the paper's rates and
// a "paper" variant, so their units and records never mix with the
// practitioner protocol's; the other methods are untouched.
func TestPlansUnderPaperProtocol(t *testing.T) {
	p, err := GetProfile("quick")
	if err != nil {
		t.Fatal(err)
	}
	p.VIProtocol = vi.ProtocolPaper
	tests := []struct{ suite, method, variant string }{
		{"synthetic", "frvi", "paper"},
		{"synthetic", "iaf", "paper"},
		{"synthetic", "nuts", ""},
		{"snis", "frvi-snis", "paper-1k"},
		{"snis", "afin-snis", ""},
	}
	for _, tc := range tests {
		found := false
		for _, pl := range p.Plans(tc.suite) {
			if pl.Method != tc.method || found {
				continue
			}
			found = true
			if pl.Variant != tc.variant {
				t.Errorf("%s/%s: variant %q, want %q", tc.suite, tc.method, pl.Variant, tc.variant)
			}
			if pl.Options.VI.Protocol != vi.ProtocolPaper || !slices.Equal(pl.Options.VI.LRs, p.PaperFRVILRs) {
				t.Errorf("%s/%s: protocol %q rates %v", tc.suite, tc.method, pl.Options.VI.Protocol, pl.Options.VI.LRs)
			}
		}
		if !found {
			t.Errorf("%s: no %s plan", tc.suite, tc.method)
		}
	}
}

// Every suite the registry names (records accept exactly those) is one
// bench can run, and every method bench can build is one the results
// reader accepts (a method's registration reaches the records through
// catalog).
func TestRecordsKnowEverySuiteAndMethod(t *testing.T) {
	for _, s := range SuiteNames() {
		if _, err := lookupSuite(s); err != nil {
			t.Errorf("suite %q is registered but bench cannot run it: %v", s, err)
		}
	}
	for _, m := range methods.Names() {
		if !records.KnownMethod(m) {
			t.Errorf("method %q is not known to records: its records would be refused", m)
		}
	}
}

// gatedMethod is fakeMethod that signals its first run on started and
// then waits for release: a run held in the middle of its units.
type gatedMethod struct {
	fakeMethod
	started chan<- struct{}
	release <-chan struct{}
	once    *sync.Once
}

func (m gatedMethod) Run(ctx context.Context, job *methods.Job, emit func(methods.Point) error) error {
	m.once.Do(func() { close(m.started) })
	select {
	case <-m.release:
	case <-ctx.Done():
		return ctx.Err()
	}
	return m.fakeMethod.Run(ctx, job, emit)
}

// A sharded and an unsharded run (or shards of two plans) cannot write one
// results directory at once: whichever comes second is refused before it
// builds a method, so no unit is run and stored twice; the shards of one
// plan (a Slurm array) run side by side and together hold every unit
// once. Before, `bench` and `bench --shard 0/2` on one directory both ran,
// and report and check then refused the directory.
func TestRunShardedAndUnshardedRace(t *testing.T) {
	plain := func(name string, _ *methods.Env) (methods.Method, error) {
		if name != "nuts" && name != "frvi" {
			return nil, fmt.Errorf("%w: not faked", methods.ErrUnavailable)
		}
		return fakeMethod{name: name}, nil
	}
	tests := []struct {
		name          string
		first, second [2]int // shard, shards
		secondProfile string
		ok            bool
	}{
		{"unsharded holds, shard 0/2 comes", [2]int{0, 1}, [2]int{0, 2}, "", false},
		{"shard 0/2 holds, unsharded comes", [2]int{0, 2}, [2]int{0, 1}, "", false},
		{"shard 1/2 holds, unsharded comes", [2]int{1, 2}, [2]int{0, 1}, "", false},
		{"shard 0/2 holds, shard 0/3 comes", [2]int{0, 2}, [2]int{0, 3}, "", false},
		{"shard 0/2 holds, shard 0/2 comes", [2]int{0, 2}, [2]int{0, 2}, "", false},
		{"shard 0/2 holds, shard 1/2 of another profile comes", [2]int{0, 2}, [2]int{1, 2}, "quick", false},
		{"shard 0/2 holds, shard 1/2 comes", [2]int{0, 2}, [2]int{1, 2}, "", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			started, release := make(chan struct{}), make(chan struct{})
			once := &sync.Once{}
			gated := func(name string, env *methods.Env) (methods.Method, error) {
				m, err := plain(name, env)
				if err != nil {
					return nil, err
				}
				return gatedMethod{fakeMethod: m.(fakeMethod), started: started, release: release, once: once}, nil
			}
			first := fakeConfig(dir, gated)
			first.Shard, first.Shards = tc.first[0], tc.first[1]
			done := make(chan error, 1)
			go func() {
				_, err := Run(context.Background(), first)
				done <- err
			}()
			select {
			case <-started:
			case err := <-done:
				t.Fatalf("first run ended before its first unit: %v", err)
			}
			built := 0
			counting := func(name string, env *methods.Env) (methods.Method, error) {
				built++
				return plain(name, env)
			}
			second := fakeConfig(dir, counting)
			second.Shard, second.Shards = tc.second[0], tc.second[1]
			if tc.secondProfile != "" {
				p, _ := GetProfile(tc.secondProfile)
				second.Profile = p
			}
			_, err := Run(context.Background(), second)
			close(release)
			if firstErr := <-done; firstErr != nil {
				t.Fatalf("first run: %v", firstErr)
			}
			if tc.ok {
				if err != nil {
					t.Fatalf("second shard of the plan: %v", err)
				}
			} else if !errors.Is(err, records.ErrLocked) || built != 0 {
				t.Fatalf("second writer: %v after building %d methods; want ErrLocked before any", err, built)
			}
			l, err := records.Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			if l.Conflicts != 0 || len(l.Warnings) != 0 {
				t.Fatalf("directory after the race: %d conflicts, warnings %q", l.Conflicts, l.Warnings)
			}
			want := 384 // 192 units of 2 budgets
			if tc.first[1] > 1 && !tc.ok {
				want = 0 // one shard of two: about half
			}
			if want > 0 && len(l.Records) != want {
				t.Errorf("%d records, want %d", len(l.Records), want)
			}
		})
	}
}
