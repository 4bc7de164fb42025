package bench

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/afin-bench/afin/factor"
	"github.com/afin-bench/afin/methods"
	"github.com/afin-bench/afin/posterior"
	"github.com/afin-bench/afin/records"
	"github.com/afin-bench/afin/reports"
)

// anyFake builds fakeMethod for every name: the session, the suite's
// settings, tasks and scoring are real, only the methods are cheap.
func anyFake(name string, _ *methods.Env) (methods.Method, error) { return fakeMethod{name: name}, nil }

// fakeReference is N(0, I) draws in the task's dimension: what a
// reference-scored suite needs without a NUTS run.
func fakeReference(_ context.Context, task *factor.Task, _ *Profile) (*Reference, error) {
	rng := rand.New(rand.NewPCG(1, 2))
	z := make([]float64, 400*task.D)
	for i := range z {
		z[i] = rng.NormFloat64()
	}
	return &Reference{Draws: &posterior.Draws{D: task.D, Z: z}, Info: records.RefInfo{Kind: "fake"}}, nil
}

// suiteTestConfig is a cheap smoke run of a registered suite into dir:
// its first few settings, fake methods and references, the repository's
// raw data and the decoder fixtures.
func suiteTestConfig(t *testing.T, name, dir string, ck DecoderCheckpoints) Config {
	t.Helper()
	prof, err := GetProfile("smoke")
	if err != nil {
		t.Fatal(err)
	}
	s, err := lookupSuite(name)
	if err != nil {
		t.Fatal(err)
	}
	settings, err := s.Settings(prof)
	if err != nil {
		t.Fatal(err)
	}
	sort.SliceStable(settings, func(i, j int) bool { return settings[i].Key < settings[j].Key })
	settings = settings[:min(len(settings), 6)]
	cfg := Config{Suite: name, Profile: prof, Results: dir, Settings: settings,
		NewMethod: anyFake, Reference: fakeReference, RefCacheDir: t.TempDir()}
	switch name {
	case "uci":
		cfg.DataDir = filepath.Join("..", "datasets", "uci")
	case OpenMLSuite:
		cfg.DataDir = filepath.Join("..", "datasets", "openml")
	case DecodersSuite:
		cfg.SuiteFlags = ck.SuiteFlags()
	}
	return cfg
}

// Two shards of every registered suite run at once in one results
// directory: both succeed, together they run every unit once, and the
// directory is one `afin check` and the report accept (no conflict, no
// mix, every record valid).
func TestTwoShardsOfEverySuiteInOneDirectory(t *testing.T) {
	ck := importFixtures(t)
	for _, name := range SuiteNames() {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			var wg sync.WaitGroup
			sums := make([]*Summary, 2)
			errs := make([]error, 2)
			for i := range 2 {
				cfg := suiteTestConfig(t, name, dir, ck)
				cfg.Shard, cfg.Shards = i, 2
				wg.Add(1)
				go func() {
					defer wg.Done()
					sums[i], errs[i] = Run(context.Background(), cfg)
				}()
			}
			wg.Wait()
			records := 0
			for i, err := range errs {
				if err != nil {
					t.Fatalf("shard %d/2: %v", i, err)
				}
				if s := sums[i]; s.Failed != 0 || s.Ran != s.Units {
					t.Fatalf("shard %d/2: %+v", i, s)
				}
				records += sums[i].Records
			}
			whole := suiteTestConfig(t, name, t.TempDir(), ck)
			sum, err := Run(context.Background(), whole)
			if err != nil || sum.Units != sums[0].Units+sums[1].Units {
				t.Fatalf("unsharded run: %+v, %v; shards ran %d and %d units", sum, err, sums[0].Units, sums[1].Units)
			}
			checkAccepted(t, dir, records)
		})
	}
}

// checkAccepted fails unless dir holds n records that the results reader
// takes without conflict, failure or mix (what `afin check` refuses) and
// the report builds from.
func checkAccepted(t *testing.T, dir string, n int) {
	t.Helper()
	l, err := records.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.ConflictError(); err != nil || len(l.Mixed) > 0 || len(l.Failures()) > 0 || len(l.Records) != n || n == 0 {
		t.Fatalf("directory: conflict %v, mixed %v, %d failed, %d records of %d appended", err, l.Mixed, len(l.Failures()), len(l.Records), n)
	}
	if _, err := reports.Build(l.Records); err != nil {
		t.Fatalf("report: %v", err)
	}
}

// rewriteRecords applies edit to every record of the one results file
// of dir.
func rewriteRecords(t *testing.T, dir string, edit func(*records.Record)) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	l, err := records.Load(dir)
	if err != nil || len(files) != 1 {
		t.Fatalf("%v, files %v", err, files)
	}
	for i := range l.Records {
		edit(&l.Records[i])
	}
	out, err := os.Create(files[0])
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	if err := records.WriteRecords(out, l.Records); err != nil {
		t.Fatal(err)
	}
}

// A run refuses a directory holding one key twice with different
// results, as report and check do, naming the key and both lines; it
// appends nothing.
func TestRunRefusesConflictingDuplicates(t *testing.T) {
	dir := t.TempDir()
	cfg := fakeConfig(dir, anyFake)
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "synthetic.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(string(data), "\n")
	l, _ := records.Load(dir)
	r := l.Records[0]
	if !strings.Contains(first, `"setting":"`+r.Setting+`"`) {
		t.Fatalf("first line is not the first record read: %s", first)
	}
	r.M1 += 0.5
	stray, _ := os.Create(filepath.Join(dir, "stray.jsonl"))
	records.WriteRecords(stray, []records.Record{r})
	stray.Close()
	before, _ := os.ReadFile(filepath.Join(dir, "synthetic.jsonl"))
	cfg.RetryFailed = true
	_, err = Run(context.Background(), cfg)
	if !errors.Is(err, records.ErrConflict) {
		t.Fatalf("run on a conflicting directory: %v, want ErrConflict", err)
	}
	for _, want := range []string{r.Key(), "synthetic.jsonl:1", "stray.jsonl:1"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
	if after, _ := os.ReadFile(filepath.Join(dir, "synthetic.jsonl")); string(after) != string(before) {
		t.Error("the refused run changed the results file")
	}
}

// Resuming a directory whose records carry another commit is refused up
// front, naming both commits, unless the run allows the mix; records of
// another suite do not count (check compares commits per suite).
func TestResumeRefusesAnotherCommit(t *testing.T) {
	dir := t.TempDir()
	cfg := fakeConfig(dir, anyFake)
	half := fakeConfig(dir, anyFake)
	half.Seeds = []uint64{0}
	if _, err := Run(context.Background(), half); err != nil {
		t.Fatal(err)
	}
	const other = "feedfacefeedfacefeedfacefeedfacefeedface"
	rewriteRecords(t, dir, func(r *records.Record) { r.Provenance.GitCommit = other })
	before, _ := os.ReadFile(filepath.Join(dir, "synthetic.jsonl"))
	_, err := Run(context.Background(), cfg)
	if !errors.Is(err, records.ErrMixedCommits) {
		t.Fatalf("resume with another commit: %v, want ErrMixedCommits", err)
	}
	mine := records.CurrentProvenance(context.Background(), "smoke", "").GitCommit
	for _, want := range []string{other[:12], mine[:min(len(mine), 12)], "--allow-mixed"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
	if after, _ := os.ReadFile(filepath.Join(dir, "synthetic.jsonl")); string(after) != string(before) {
		t.Error("the refused resume changed the results file")
	}
	// Another suite's run in the same directory is no mix of this one.
	cal := Config{Suite: CalibrationSuite, Profile: cfg.Profile, Results: dir, NewMethod: anyFake, Methods: []string{"nuts"}, Settings: CalibrationSettings()[:1]}
	if _, err := Run(context.Background(), cal); err != nil {
		t.Fatal(err)
	}
	cfg.AllowMixed = true
	sum, err := Run(context.Background(), cfg)
	if err != nil || sum.Skipped == 0 || sum.Ran == 0 {
		t.Fatalf("resume with --allow-mixed: %+v, %v", sum, err)
	}
}
