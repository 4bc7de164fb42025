package bench

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/afin-bench/afin/datasets"
	"github.com/afin-bench/afin/methods"
	"github.com/afin-bench/afin/posterior"
	"github.com/afin-bench/afin/records"
)

func openmlTestDir(t *testing.T) string {
	t.Helper()
	// The repository holds the smoke profile's three datasets.
	dir := filepath.Join("..", "datasets", "openml")
	if err := datasets.CheckOpenMLDir(dir, []string{"haberman", "heart-statlog", "blood-transfusion-service-center"}); err != nil {
		t.Fatal(err)
	}
	return dir
}

func openmlSettings(t *testing.T, names ...string) []Setting {
	t.Helper()
	p, _ := GetProfile("quick")
	var out []Setting
	for _, s := range OpenMLSettings(p) {
		if contains(names, s.Key) {
			out = append(out, s)
		}
	}
	if len(out) != len(names) {
		t.Fatalf("settings %v: found %d", names, len(out))
	}
	return out
}

// fixedDraws emits S draws of one fixed z per budget: the predictive is
// then σ(xᵀz) exactly, which the test recomputes from the split.
type fixedDraws struct {
	name string
	z    func(d int) []float64
}

func (m fixedDraws) Name() string                      { return m.name }
func (m fixedDraws) Kind() string                      { return methods.KindDraws }
func (m fixedDraws) Slots(ladder []int) []methods.Slot { return fakeSlots(ladder) }
func (m fixedDraws) Run(_ context.Context, job *methods.Job, emit func(methods.Point) error) error {
	for _, b := range job.Ladder {
		z := m.z(job.Task.D)
		all := make([]float64, 0, 3*len(z))
		for range 3 {
			all = append(all, z...)
		}
		if err := emit(methods.Point{Slot: methods.Slot{Kind: methods.KindDraws, Budget: b}, Draws: &posterior.Draws{D: job.Task.D, Z: all}, Seconds: 0.5}); err != nil {
			return err
		}
	}
	return nil
}

// TestOpenMLMetricsIndependent: a method whose posterior is a point mass
// at z gets, in its record, the accuracy, NLL and AUC of σ(xᵀz) computed
// here directly (AUC by counting pairs), on both splits.
func TestOpenMLMetricsIndependent(t *testing.T) {
	dir := openmlTestDir(t)
	res := t.TempDir()
	zOf := func(d int) []float64 {
		rng := rand.New(rand.NewPCG(3, 4))
		z := make([]float64, d)
		for i := range z {
			z[i] = rng.NormFloat64()
		}
		return z
	}
	prof, _ := GetProfile("smoke")
	cfg := Config{Suite: OpenMLSuite, Profile: prof, Results: res, DataDir: dir, Methods: []string{"nuts"},
		Settings: openmlSettings(t, "haberman"),
		NewMethod: func(name string, _ *methods.Env) (methods.Method, error) {
			return fixedDraws{name: name, z: zOf}, nil
		}}
	sum, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Ran != 1 || sum.Records != 1 {
		t.Fatalf("summary %+v", sum)
	}
	recs, err := records.ReadDir(res)
	if err != nil {
		t.Fatal(err)
	}
	r := recs[0]
	sp, err := datasets.LoadOpenML(dir, "haberman", 0)
	if err != nil {
		t.Fatal(err)
	}
	z := zOf(sp.Info.DModel())
	for _, split := range []struct {
		name string
		x    [][]float64
		y    []float64
	}{{"test", sp.XTest, sp.YTest}, {"train", sp.XTrain, sp.YTrain}} {
		var hits, nll, num, den float64
		p := make([]float64, len(split.x))
		for i, x := range split.x {
			var eta float64
			for j := range x {
				eta += x[j] * z[j]
			}
			p[i] = 1 / (1 + math.Exp(-eta))
			if (p[i] >= 0.5) == (split.y[i] == 1) {
				hits++
			}
			if split.y[i] == 1 {
				nll -= math.Log(math.Max(p[i], 1e-6))
			} else {
				nll -= math.Log(math.Max(1-p[i], 1e-6))
			}
		}
		for i := range p {
			for j := range p {
				if split.y[i] == 1 && split.y[j] == 0 {
					den++
					if p[i] > p[j] {
						num++
					} else if p[i] == p[j] {
						num += 0.5
					}
				}
			}
		}
		n := float64(len(p))
		for k, want := range map[string]float64{"_acc": hits / n, "_nll": nll / n, "_auc": num / den} {
			got := float64(r.Diagnostics[split.name+k])
			if math.Abs(got-want) > 1e-9 {
				t.Errorf("%s%s = %.12g, direct %.12g", split.name, k, got, want)
			}
		}
	}
	if r.D != 15 || r.N != 214 || r.Setting != "haberman" || !math.IsNaN(float64(r.M1)) || r.Diagnostics["n_test"] != 92 {
		t.Errorf("record %+v", r)
	}
	if _, ok := r.Diagnostics["ess_ratio"]; ok {
		t.Error("unweighted draws carry an ess_ratio")
	}
	// Resume: nothing left to run.
	sum, err = Run(context.Background(), cfg)
	if err != nil || sum.Ran != 0 || sum.Skipped != 1 {
		t.Fatalf("rerun: %+v, %v", sum, err)
	}
}

// TestOpenMLRealMethods runs the four methods at the smoke budgets on
// two datasets: every record has finite metrics in range, AFIN+SNIS an
// ESS ratio in (0, 1], and the AFIN methods carry the out-of-support flag
// exactly where N exceeds the shipped checkpoint's 256 (blood, N=523).
func TestOpenMLRealMethods(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs AFIN, NUTS and FRVI")
	}
	dir := openmlTestDir(t)
	res := t.TempDir()
	prof, _ := GetProfile("smoke")
	cfg := Config{Suite: OpenMLSuite, Profile: prof, Results: res, DataDir: dir,
		Settings: openmlSettings(t, "haberman", "blood-transfusion-service-center")}
	sum, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Ran != 8 {
		t.Fatalf("summary %+v", sum)
	}
	recs, _ := records.ReadDir(res)
	if len(recs) != 8 {
		t.Fatalf("%d records", len(recs))
	}
	for _, r := range recs {
		for _, k := range OpenMLMetrics {
			v := float64(r.Diagnostics[k])
			hi := 1.0
			if strings.HasSuffix(k, "nll") {
				hi = -math.Log(1e-6)
			}
			if !(v >= 0 && v <= hi) {
				t.Errorf("%s %s: %s = %g", r.Setting, r.Method, k, v)
			}
		}
		// Better than chance on the training split, for every method.
		if acc := float64(r.Diagnostics["train_acc"]); acc < 0.7 {
			t.Errorf("%s %s: training accuracy %g", r.Setting, r.Method, acc)
		}
		ess, has := r.Diagnostics["ess_ratio"]
		if (r.Method == "afin-snis") != has || (has && !(ess > 0 && ess <= 1)) {
			t.Errorf("%s %s: ess_ratio %v (present %v)", r.Setting, r.Method, ess, has)
		}
		afinMethod := strings.HasPrefix(r.Method, "afin")
		// blood-transfusion is outside the shipped checkpoint's support in
		// N (523 > 256); haberman in its covariates (the intercept column,
		// rms 1, and the scaled features exceed the ranges the simulator
		// drew at d = 15); heart-statlog (d = 14) is inside.
		wantFlag := afinMethod && (r.Setting == "blood-transfusion-service-center" || r.Setting == "haberman")
		if (r.OutsideSupport != "") != wantFlag {
			t.Errorf("%s %s: outside_support %q", r.Setting, r.Method, r.OutsideSupport)
		}
		// The records carry every flag by name and in words, as the
		// shared runner's do (the report counts them, check can fail on
		// them).
		if wantFlag && (r.Flags["outside_support"] == "" || len(r.Warnings) == 0) {
			t.Errorf("%s %s: flags %v, warnings %q: the support flag is missing", r.Setting, r.Method, r.Flags, r.Warnings)
		}
	}
}

// TestOpenMLRefusedWritesNothing: a missing data directory or a bad raw
// file refuses the run before the results file exists.
func TestOpenMLRefusedWritesNothing(t *testing.T) {
	src := openmlTestDir(t)
	prof, _ := GetProfile("smoke")
	never := func(string, *methods.Env) (methods.Method, error) {
		return nil, errors.New("a refused run must not build methods")
	}
	bad := t.TempDir()
	data, err := os.ReadFile(filepath.Join(src, "haberman", "haberman.arff"))
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(bad, "haberman"), 0o755)
	os.WriteFile(filepath.Join(bad, "haberman", "haberman.arff"), []byte(strings.Replace(string(data), "\n30,64,1,1", "\n30,64,1", 1)), 0o644)
	for _, c := range []struct {
		name, dir, want string
		noData          bool
	}{
		{"missing directory", filepath.Join(t.TempDir(), "none"), "AFIN_OPENML_DIR", true},
		{"empty directory", t.TempDir(), "lacks 1 of 1 raw files", true},
		{"bad file", bad, "haberman.arff:", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := filepath.Join(t.TempDir(), "results")
			cfg := Config{Suite: OpenMLSuite, Profile: prof, Results: res, DataDir: c.dir,
				Settings: openmlSettings(t, "haberman"), NewMethod: never}
			sum, err := Run(context.Background(), cfg)
			if err == nil || sum != nil || !strings.Contains(err.Error(), c.want) || errors.Is(err, datasets.ErrNoData) != c.noData {
				t.Fatalf("summary %v, error %v", sum, err)
			}
			if _, err := os.Stat(res); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("results directory created: %v", err)
			}
		})
	}
}

// TestOpenMLPlans: the paper's 4,096 proposals at every profile, NUTS,
// FRVI with ELBO selection, and the smoke profile's three datasets.
func TestOpenMLPlans(t *testing.T) {
	for _, name := range ProfileNames() {
		p, _ := GetProfile(name)
		got := map[string][]int{}
		for _, pl := range p.Plans(OpenMLSuite) {
			got[pl.Method] = pl.Ladder
			if pl.Method == "frvi" && pl.Options.VI.Selection != methods.DefaultOptions().VI.Selection {
				t.Errorf("%s: frvi selection %q", name, pl.Options.VI.Selection)
			}
		}
		if len(got) != 4 || got["afin"][0] != 4096 || got["afin-snis"][0] != 4096 || got["nuts"] == nil || got["frvi"] == nil {
			t.Errorf("%s: plans %v", name, got)
		}
		n := len(OpenMLSettings(p))
		if want := map[string]int{"smoke": 3, "quick": 16, "paper": 16}[name]; n != want {
			t.Errorf("%s: %d datasets, want %d", name, n, want)
		}
	}
	p, _ := GetProfile("quick")
	if l := p.ladderOfKind(OpenMLSuite, methods.KindProposals); len(l) != 1 || l[0] != 4096 {
		t.Errorf("exec proposals ladder %v", l)
	}
}

type failingOpenML struct{ fixedDraws }

func (failingOpenML) Run(context.Context, *methods.Job, func(methods.Point) error) error {
	return errors.New("boom")
}

// TestOpenMLFailedUnit: a failing method leaves a failed record, the run
// reports it, and a rerun counts it as failed earlier without rerunning.
func TestOpenMLFailedUnit(t *testing.T) {
	dir := openmlTestDir(t)
	res := t.TempDir()
	prof, _ := GetProfile("smoke")
	cfg := Config{Suite: OpenMLSuite, Profile: prof, Results: res, DataDir: dir, Methods: []string{"nuts"},
		Settings: openmlSettings(t, "haberman"),
		NewMethod: func(name string, _ *methods.Env) (methods.Method, error) {
			return failingOpenML{fixedDraws{name: name}}, nil
		}}
	sum, err := Run(context.Background(), cfg)
	if err == nil || !strings.Contains(err.Error(), "boom") || sum.Failed != 1 || sum.Records != 1 {
		t.Fatalf("summary %+v, error %v", sum, err)
	}
	l, _ := records.Load(res)
	if len(l.Records) != 1 || !l.Records[0].Failed() || l.Records[0].Setting != "haberman" {
		t.Fatalf("records %+v", l.Records)
	}
	sum, err = Run(context.Background(), cfg)
	if err != nil || sum.Ran != 0 || sum.PrevFailed != 1 {
		t.Fatalf("rerun: %+v, %v", sum, err)
	}
}

// TestOpenMLExecMethod: an external method is planned in the suite at the
// NUTS budget (it counts draws) and its failure is recorded like a
// built-in's.
func TestOpenMLExecMethod(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds a helper binary")
	}
	dir := openmlTestDir(t)
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "extexact")
	if out, err := exec.Command("go", "build", "-o", bin, "../methods/testdata/extexact").CombinedOutput(); err != nil {
		t.Fatalf("building extexact: %v\n%s", err, out)
	}
	file := filepath.Join(tmp, "methods.json")
	writeMethodsFile(t, file, map[string]methods.ExecSpec{"crash": {Command: []string{bin, "-mode", "crash"}}})
	prof, _ := GetProfile("smoke")
	res := filepath.Join(tmp, "results")
	cfg := Config{Suite: OpenMLSuite, Profile: prof, Results: res, DataDir: dir, Methods: []string{"exec:crash"},
		Env: &methods.Env{MethodsFile: file}, Settings: openmlSettings(t, "haberman")}
	sum, err := Run(context.Background(), cfg)
	if err == nil || sum == nil || sum.Failed != 1 {
		t.Fatalf("summary %+v, error %v", sum, err)
	}
	l, _ := records.Load(res)
	if len(l.Records) != 1 {
		t.Fatalf("%d records", len(l.Records))
	}
	r := l.Records[0]
	if r.Method != "exec:crash" || r.Budget != prof.openmlBudget().nutsDraws || !strings.Contains(r.Error, "sampler diverged") {
		t.Errorf("record %+v", r)
	}
}
