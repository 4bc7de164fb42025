package datasets

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/afin-bench/afin/factor"
	"github.com/afin-bench/afin/internal/moments"
)

// uciTestdata is the repository's directory of the twelve raw files
// (uci/SOURCES.md says where they came from), read from disk as a data
// directory; the binary's built-in copy is the same bytes (embed_test.go).
var uciTestdata = "uci"

// dataDir finds the raw files: $AFIN_DATA_DIR when it holds them (CI sets
// it), else the repository's copy, which every checkout has.
func dataDir(t *testing.T) string {
	t.Helper()
	if c := os.Getenv(EnvDataDir); c != "" {
		if _, err := os.Stat(filepath.Join(c, "haberman", "haberman.data")); err == nil {
			return c
		}
	}
	return uciTestdata
}

// table6 is the paper's Table 6, typed in independently of the registry.
var table6 = []struct {
	key, prior, lik string
	d, n            int
}{
	{"concrete_slump", "diag_laplace", "lin_gaussian", 7, 103},
	{"diabetes", "diag_laplace", "lin_gaussian", 10, 442},
	{"yacht", "diag_gaussian", "lin_student_t", 6, 308},
	{"machine_cpu", "diag_laplace", "lin_gaussian", 6, 209},
	{"auto_mpg", "diag_laplace", "lin_gaussian", 7, 392},
	{"haberman", "diag_gaussian", "bernoulli_logit", 3, 306},
	{"sonar", "diag_student_t", "bernoulli_logit", 8, 208},
	{"parkinsons", "diag_gaussian", "bernoulli_logit", 8, 195},
	{"heart", "diag_gaussian", "bernoulli_logit", 13, 297},
	{"seeds", "diag_gaussian", "bernoulli_logit", 7, 210},
	{"forest_fires", "diag_student_t", "heterogeneous", 8, 517},
	{"mesquite", "diag_gaussian", "heterogeneous", 7, 46},
}

func TestListMatchesTable6(t *testing.T) {
	list := List()
	if len(list) != len(table6) {
		t.Fatalf("List has %d tasks, want %d", len(list), len(table6))
	}
	for i, want := range table6 {
		got := list[i]
		if got.Key != want.key || got.D != want.d || got.N != want.n || got.Prior != want.prior || got.Likelihood != want.lik {
			t.Errorf("task %d = %s d=%d N=%d %s/%s, want %s d=%d N=%d %s/%s", i,
				got.Key, got.D, got.N, got.Prior, got.Likelihood, want.key, want.d, want.n, want.prior, want.lik)
		}
		if got.Heterogeneous != (want.lik == Heterogeneous) {
			t.Errorf("%s: Heterogeneous = %v", got.Key, got.Heterogeneous)
		}
		if got.Name == "" || got.File == "" || len(got.URLs) == 0 || len(got.SHA256) != 64 {
			t.Errorf("%s: incomplete Info %+v", got.Key, got)
		}
	}
	// List hands out copies: editing one must not leak into the next.
	list[0].URLs[0] = "changed"
	list[0].D = 99
	if again := List(); again[0].D != 7 || again[0].URLs[0] == "changed" {
		t.Error("List shares state between calls")
	}
	if _, err := Lookup("nope"); err == nil || !strings.Contains(err.Error(), "concrete_slump") {
		t.Errorf("Lookup(nope) error %v should list the valid keys", err)
	}
}

// TestLoadTasks checks every task against Table 6 and the task contract:
// it validates, its density is finite with a finite gradient at the prior
// mean, and its JSON round-trips to the same density.
func TestLoadTasks(t *testing.T) {
	dir := dataDir(t)
	for _, want := range table6 {
		t.Run(want.key, func(t *testing.T) {
			task, err := Load(dir, want.key)
			if err != nil {
				t.Fatal(err)
			}
			if task.D != want.d || task.N() != want.n || task.Prior.Family() != want.prior {
				t.Fatalf("d=%d N=%d prior=%s, want d=%d N=%d prior=%s", task.D, task.N(), task.Prior.Family(), want.d, want.n, want.prior)
			}
			if err := task.Validate(); err != nil {
				t.Fatalf("task does not validate: %v", err)
			}
			fam := map[string]int{}
			for _, f := range task.Factors {
				fam[f.Family()]++
			}
			switch want.key {
			case "forest_fires":
				if fam[factor.LinStudentTFamily] != 259 || fam[factor.BernoulliLogitFamily] != 258 {
					t.Errorf("families %v, want 259 lin_student_t + 258 bernoulli_logit", fam)
				}
			case "mesquite":
				if fam[factor.LinGaussianFamily] != 23 || fam[factor.BernoulliLogitFamily] != 23 {
					t.Errorf("families %v, want 23 lin_gaussian + 23 bernoulli_logit", fam)
				}
			default:
				if fam[want.lik] != want.n {
					t.Errorf("families %v, want %d × %s", fam, want.n, want.lik)
				}
			}
			z := slices.Clone(task.Prior.Location())
			grad := make([]float64, task.D)
			lp := task.LogDensityGrad(z, grad)
			if math.IsNaN(lp) || math.IsInf(lp, 0) || math.IsInf(task.LogJoint(z), 0) {
				t.Fatalf("log density at the prior mean = %g", lp)
			}
			for i, g := range grad {
				if math.IsNaN(g) || math.IsInf(g, 0) {
					t.Fatalf("grad[%d] = %g", i, g)
				}
			}
			data, err := factor.MarshalTask(task)
			if err != nil {
				t.Fatal(err)
			}
			back, err := factor.ParseTask(data)
			if err != nil {
				t.Fatalf("task JSON does not parse back: %v", err)
			}
			for i := range z {
				z[i] = 0.3 * float64(i%3-1)
			}
			if a, b := task.LogJoint(z), back.LogJoint(z); a != b {
				t.Errorf("JSON round trip changes log joint: %g vs %g", a, b)
			}
			again, err := Load(dir, want.key)
			if err != nil {
				t.Fatal(err)
			}
			if a, b := task.LogJoint(z), again.LogJoint(z); a != b {
				t.Errorf("Load is not deterministic: %g vs %g", a, b)
			}
		})
	}
}

// TestTables pins each file's record counts after cleaning and a few cells
// read off the raw files by eye (first and last complete records).
func TestTables(t *testing.T) {
	dir := dataDir(t)
	type cell struct {
		row  int // index among complete records; -1 = last
		col  string
		want float64
	}
	cases := []struct {
		key           string
		raw, complete int
		cells         []cell
	}{
		{"concrete_slump", 103, 103, []cell{{0, "Cement", 273}, {0, "Fine Aggr.", 680}, {0, "SLUMP(cm)", 23}, {-1, "Cement", 348.7}, {-1, "SLUMP(cm)", 29}}},
		{"diabetes", 442, 442, []cell{{0, "AGE", 59}, {0, "S5", 4.8598}, {0, "Y", 151}, {-1, "BMI", 19.6}, {-1, "Y", 57}}},
		{"yacht", 308, 308, []cell{{0, "lcb", -2.3}, {0, "residuary_resistance", 0.11}, {-1, "froude", 0.45}, {-1, "residuary_resistance", 46.66}}},
		{"machine_cpu", 209, 209, []cell{{0, "MYCT", 125}, {0, "MMAX", 6000}, {0, "PRP", 198}, {-1, "MYCT", 480}, {-1, "PRP", 45}}},
		// Six records have "?" horsepower (lines 33, 127, 331, 337, 355, 375):
		// complete record 32 is line 34, the one after the dropped "ford pinto".
		{"auto_mpg", 398, 392, []cell{{0, "mpg", 18}, {0, "weight", 3504}, {31, "origin", 3}, {32, "mpg", 19}, {32, "weight", 2634}, {-1, "horsepower", 82}, {-1, "origin", 1}}},
		{"haberman", 306, 306, []cell{{0, "age", 30}, {0, "died_within_5y", 0}, {-1, "age", 83}, {-1, "died_within_5y", 1}}},
		{"sonar", 208, 208, []cell{{0, "band1", 0.02}, {0, "mine", 0}, {-1, "band1", 0.026}, {-1, "mine", 1}}},
		{"parkinsons", 195, 195, []cell{{0, "MDVP:Fo(Hz)", 119.992}, {0, "status", 1}, {-1, "PPE", 0.148569}, {-1, "status", 0}}},
		// Six records have "?" in ca or thal, the last record among them.
		{"heart", 303, 297, []cell{{0, "age", 63}, {0, "disease", 0}, {1, "disease", 1}, {-1, "age", 57}}},
		// Line 8 has doubled tabs: "14.11 14.1 0.8911 5.42 3.302 2.7 <> 5 <> 1".
		{"seeds", 210, 210, []cell{{0, "area", 15.26}, {0, "kama", 1}, {7, "groove_length", 5}, {7, "kama", 1}, {-1, "groove_length", 5.063}, {-1, "kama", 0}}},
		{"forest_fires", 517, 517, []cell{{0, "FFMC", 86.2}, {0, "area", 0}, {-1, "FFMC", 79.5}, {-1, "wind", 4.5}}},
		{"mesquite", 46, 46, []cell{{0, "group_MCD", 1}, {0, "weight", 401.3}, {-1, "group_MCD", 0}, {-1, "weight", 213.5}}},
	}
	for _, c := range cases {
		t.Run(c.key, func(t *testing.T) {
			tab, err := ReadTable(dir, c.key)
			if err != nil {
				t.Fatal(err)
			}
			if tab.RawRows != c.raw || len(tab.Y) != c.complete || len(tab.X) != c.complete {
				t.Fatalf("records raw=%d complete=%d, want %d, %d", tab.RawRows, len(tab.Y), c.raw, c.complete)
			}
			for _, cl := range c.cells {
				row := cl.row
				if row < 0 {
					row = len(tab.Y) - 1
				}
				var got float64
				if cl.col == tab.Response {
					got = tab.Y[row]
				} else {
					j := slices.Index(tab.Covariates, cl.col)
					if j < 0 {
						t.Fatalf("no column %q in %v", cl.col, tab.Covariates)
					}
					got = tab.X[row][j]
				}
				if got != cl.want {
					t.Errorf("row %d %s = %g, want %g", cl.row, cl.col, got, cl.want)
				}
			}
		})
	}
}

// TestStandardisation checks the App. D.5 properties on the built tasks:
// continuous responses have mean 0 and SD 1 over the rows that use them,
// and every design has centred columns with row covariance (0.81/d)·I
// (the Mesquite intercept aside, whose column is the constant 0.9/√d).
func TestStandardisation(t *testing.T) {
	dir := dataDir(t)
	for _, in := range List() {
		t.Run(in.Key, func(t *testing.T) {
			task, err := Load(dir, in.Key)
			if err != nil {
				t.Fatal(err)
			}
			n, d := task.N(), task.D
			var ys []float64
			gram := make([]float64, d*d)
			colSum := make([]float64, d)
			for _, f := range task.Factors {
				var x []float64
				switch f := f.(type) {
				case *factor.LinGaussian:
					x, ys = f.X, append(ys, f.Y)
				case *factor.LinStudentT:
					x, ys = f.X, append(ys, f.Y)
				case *factor.BernoulliLogit:
					x = f.X
					if f.Y != 0 && f.Y != 1 {
						t.Fatalf("label %g", f.Y)
					}
				default:
					t.Fatalf("unexpected factor %T", f)
				}
				for i := range d {
					colSum[i] += x[i]
					for j := range d {
						gram[i*d+j] += x[i] * x[j]
					}
				}
			}
			if ys != nil {
				m, sd := moments.MeanSD(ys, 0)
				if math.Abs(m) > 1e-12 || math.Abs(sd-1) > 1e-12 {
					t.Errorf("response mean %g sd %g, want 0, 1", m, sd)
				}
			}
			s2 := 0.81 / float64(d)
			for i := range d {
				mean := colSum[i] / float64(n)
				wantMean := 0.0
				if in.Key == "mesquite" && i == d-1 {
					wantMean = math.Sqrt(s2)
				}
				if math.Abs(mean-wantMean) > 1e-12 {
					t.Errorf("design column %d mean %g, want %g", i, mean, wantMean)
				}
				for j := range d {
					want := 0.0
					if i == j {
						want = s2
					}
					if got := gram[i*d+j] / float64(n); math.Abs(got-want) > 1e-10 {
						t.Errorf("XᵀX/N [%d,%d] = %g, want %g", i, j, got, want)
					}
				}
			}
		})
	}
}

func TestStandardizeColumns(t *testing.T) {
	dir := dataDir(t)
	tab, err := ReadTable(dir, "heart")
	if err != nil {
		t.Fatal(err)
	}
	std, err := standardizeColumns(columns(tab.X), tab.Covariates)
	if err != nil {
		t.Fatal(err)
	}
	for j, c := range std {
		m, sd := moments.MeanSD(c, 0)
		if math.Abs(m) > 1e-12 || math.Abs(sd-1) > 1e-12 {
			t.Errorf("%s: mean %g sd %g", tab.Covariates[j], m, sd)
		}
	}
	if _, err := standardizeColumns([][]float64{{1, 1, 1}}, []string{"k"}); err == nil || !strings.Contains(err.Error(), "k") {
		t.Errorf("constant column: error %v", err)
	}
}

// TestWhitenZCA checks the whitening against its defining properties on a
// correlated random design: identity row covariance (times scale²), and
// the ZCA signature that SᵀXw/n = scale·C^{1/2} is symmetric with a
// positive diagonal (no rotation or sign flip of the coordinates).
func TestWhitenZCA(t *testing.T) {
	const n, p, scale = 400, 4, 0.5
	// A deterministic, strongly correlated design.
	std := make([][]float64, p)
	for j := range std {
		std[j] = make([]float64, n)
	}
	for i := range n {
		a, b := math.Sin(float64(i)*1.3), math.Cos(float64(i)*0.7)
		std[0][i] = a
		std[1][i] = a + 0.3*b
		std[2][i] = b - 0.5*a + 0.1*math.Cos(float64(i)*5.1)
		std[3][i] = math.Sin(float64(i) * 2.9)
	}
	std, err := standardizeColumns(std, []string{"a", "b", "c", "d"})
	if err != nil {
		t.Fatal(err)
	}
	x, err := whitenZCA(std, scale)
	if err != nil {
		t.Fatal(err)
	}
	for i := range p {
		for j := range p {
			var cov, cross, crossT float64
			for r := range n {
				cov += x[r][i] * x[r][j]
				cross += std[i][r] * x[r][j]
				crossT += std[j][r] * x[r][i]
			}
			want := 0.0
			if i == j {
				want = scale * scale
			}
			if got := cov / n; math.Abs(got-want) > 1e-12 {
				t.Errorf("cov[%d,%d] = %g, want %g", i, j, got, want)
			}
			if math.Abs(cross-crossT) > 1e-9*n {
				t.Errorf("SᵀXw not symmetric at [%d,%d]: %g vs %g", i, j, cross/n, crossT/n)
			}
			if i == j && cross <= 0 {
				t.Errorf("SᵀXw diagonal [%d] = %g, want > 0", i, cross/n)
			}
		}
	}
	// An exact duplicate column (Jitter:DDP = 3·RAP in Parkinsons) must be
	// refused, not whitened into noise.
	dup := [][]float64{std[0], std[1], slices.Clone(std[0])}
	if _, err := whitenZCA(dup, 1); err == nil || !strings.Contains(err.Error(), "collinear") {
		t.Errorf("collinear design: error %v", err)
	}
}

// TestScreening pins the covariates "top-8" selects, with their
// correlations checked against an independent recomputation.
func TestScreening(t *testing.T) {
	dir := dataDir(t)
	cases := map[string][]string{
		"sonar":      {"band9", "band10", "band11", "band12", "band13", "band45", "band48", "band49"},
		"parkinsons": {"MDVP:Fo(Hz)", "MDVP:Flo(Hz)", "MDVP:Shimmer", "MDVP:APQ", "HNR", "spread1", "spread2", "PPE"},
	}
	for key, want := range cases {
		tab, err := ReadTable(dir, key)
		if err != nil {
			t.Fatal(err)
		}
		std, err := standardizeColumns(columns(tab.X), tab.Covariates)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		keep := topKByCorrelation(std, tab.Y, 8)
		for _, j := range keep {
			got = append(got, tab.Covariates[j])
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s top-8 = %v, want %v", key, got, want)
		}
		// Every kept |r| is at least every dropped |r|, with r computed
		// the textbook way on the raw columns.
		cols := columns(tab.X)
		minKept, maxDropped := math.Inf(1), 0.0
		for j, c := range cols {
			r := math.Abs(pearson(c, tab.Y))
			if slices.Contains(keep, j) {
				minKept = min(minKept, r)
			} else {
				maxDropped = max(maxDropped, r)
			}
		}
		if minKept < maxDropped {
			t.Errorf("%s: kept |r| down to %g but dropped %g", key, minKept, maxDropped)
		}
	}
}

func pearson(a, b []float64) float64 {
	n := float64(len(a))
	var sa, sb, saa, sbb, sab float64
	for i := range a {
		sa += a[i]
		sb += b[i]
		saa += a[i] * a[i]
		sbb += b[i] * b[i]
		sab += a[i] * b[i]
	}
	return (sab - sa*sb/n) / math.Sqrt((saa-sa*sa/n)*(sbb-sb*sb/n))
}

// TestNoiseScales pins the fixed noise scales (measured once, see the
// package doc) and checks the estimators against closed forms.
func TestNoiseScales(t *testing.T) {
	dir := dataDir(t)
	want := map[string]float64{
		"concrete_slump": 0.852, "diabetes": 0.702, "yacht": 0.548, "machine_cpu": 0.373,
		"auto_mpg": 0.426, "forest_fires": 0.719, "mesquite": 0.438,
	}
	for key, w := range want {
		task, err := Load(dir, key)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range task.Factors {
			var sigma float64
			switch f := f.(type) {
			case *factor.LinGaussian:
				sigma = f.Sigma
			case *factor.LinStudentT:
				sigma = f.Sigma
				if f.DF != 4 {
					t.Errorf("%s: df %g", key, f.DF)
				}
			default:
				continue
			}
			if math.Abs(sigma-w) > 5e-4 {
				t.Errorf("%s: sigma %.4f, want %.3f", key, sigma, w)
			}
			break
		}
	}
	// For ν = 4 the t quantile has a closed form: t_p = 2√(q−1) with
	// q = cos(arccos(√α)/3)/√α, α = 4p(1−p).
	alpha := 4 * 0.75 * 0.25
	q := math.Cos(math.Acos(math.Sqrt(alpha))/3) / math.Sqrt(alpha)
	t75 := 2 * math.Sqrt(q-1)
	// Residuals ±1 around 0: MAD is 1, so the scale is 1/t75.
	res := []float64{-1, 1, -1, 1, 0}
	if got := studentTScale(res, 4); math.Abs(got-1/t75) > 1e-9 {
		t.Errorf("studentTScale = %g, want %g", got, 1/t75)
	}
	if got := residualSD([]float64{3, -3, 3, -3}, 2); math.Abs(got-math.Sqrt(36.0/2)) > 1e-12 {
		t.Errorf("residualSD = %g", got)
	}
}

// TestHeterogeneousLabels recomputes the binary half of each
// heterogeneous task from the raw table.
func TestHeterogeneousLabels(t *testing.T) {
	dir := dataDir(t)
	for _, c := range []struct {
		key       string
		threshold float64
	}{{"forest_fires", 0.52}, {"mesquite", -1}} {
		tab, err := ReadTable(dir, c.key)
		if err != nil {
			t.Fatal(err)
		}
		task, err := Load(dir, c.key)
		if err != nil {
			t.Fatal(err)
		}
		sorted := slices.Sorted(slices.Values(tab.Y))
		med := (sorted[len(sorted)/2-1] + sorted[len(sorted)/2]) / 2
		if len(sorted)%2 == 1 {
			med = sorted[len(sorted)/2]
		}
		if c.threshold >= 0 && med != c.threshold {
			t.Errorf("%s median %g, want %g", c.key, med, c.threshold)
		}
		for i, f := range task.Factors {
			b, isBin := f.(*factor.BernoulliLogit)
			if isBin != (i%2 == 1) {
				t.Fatalf("%s factor %d is %s", c.key, i, f.Family())
			}
			if isBin && (b.Y == 1) != (tab.Y[i] > med) {
				t.Errorf("%s row %d: label %g for response %g (median %g)", c.key, i, b.Y, tab.Y[i], med)
			}
		}
	}
}

// TestPublishedFits checks the regression tasks against least-squares fits
// published for the same data: with standardised responses and centred
// covariates, σ² = (1−R²)·N/(N−d), so the fixed noise scale reveals the
// R² of the full linear model.
func TestPublishedFits(t *testing.T) {
	dir := dataDir(t)
	cases := []struct {
		key, source string
		r2          float64
	}{
		// All ten baseline variables: R² 0.5177 (Efron et al. 2004's data,
		// the usual full OLS fit, e.g. scikit-learn's diabetes example).
		{"diabetes", "OLS on the ten baseline variables", 0.5177},
		// lm(mpg ~ . - name, Auto): Multiple R-squared 0.8215 (James et
		// al., An Introduction to Statistical Learning, §3.7 ex. 9).
		{"auto_mpg", "lm(mpg ~ . - name)", 0.8215},
	}
	for _, c := range cases {
		task, err := Load(dir, c.key)
		if err != nil {
			t.Fatal(err)
		}
		sigma := task.Factors[0].(*factor.LinGaussian).Sigma
		n, d := float64(task.N()), float64(task.D)
		r2 := 1 - sigma*sigma*(n-d)/n
		if math.Abs(r2-c.r2) > 5e-4 {
			t.Errorf("%s: R² %.4f, want %.4f (%s)", c.key, r2, c.r2, c.source)
		}
	}
}

// TestLabelCounts pins the positive labels of every task, counted with awk
// on the raw files (the heterogeneous ones: odd rows above the median; Sonar's
// 111 mines and 97 rocks are in SOURCES.md).
func TestLabelCounts(t *testing.T) {
	dir := dataDir(t)
	want := map[string]int{"haberman": 81, "sonar": 111, "parkinsons": 147, "heart": 137, "seeds": 70, "forest_fires": 129, "mesquite": 11}
	for key, ones := range want {
		task, err := Load(dir, key)
		if err != nil {
			t.Fatal(err)
		}
		got := 0
		for _, f := range task.Factors {
			if b, ok := f.(*factor.BernoulliLogit); ok && b.Y == 1 {
				got++
			}
		}
		if got != ones {
			t.Errorf("%s: %d positive labels, want %d", key, got, ones)
		}
	}
}

// TestSingleMode climbs each task's log density from three dispersed
// starts: all must reach the same finite mode of prior-scale size. This
// catches a design that lets the data separate (an unbounded likelihood
// direction held only by the prior) or a mis-scaled response.
func TestSingleMode(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: gradient ascent on 12 tasks takes seconds")
	}
	dir := dataDir(t)
	for _, in := range List() {
		task, err := Load(dir, in.Key)
		if err != nil {
			t.Fatal(err)
		}
		var modes [][]float64
		for s, start := range []float64{0, 3, -3} {
			z := make([]float64, task.D)
			for i := range z {
				z[i] = start * float64(1-2*((i+s)%2))
			}
			modes = append(modes, ascend(task.LogDensityGrad, z))
		}
		for _, m := range modes[1:] {
			for i := range m {
				if math.Abs(m[i]-modes[0][i]) > 1e-4 {
					t.Errorf("%s: modes differ at %d: %g vs %g", in.Key, i, m[i], modes[0][i])
				}
			}
		}
		for i, v := range modes[0] {
			if !(math.Abs(v) < 6) {
				t.Errorf("%s: mode z[%d] = %g, far outside the prior", in.Key, i, v)
			}
		}
	}
}

// ascend is gradient ascent with step halving on decrease, stopping when
// the gradient is negligible.
func ascend(f func(z, g []float64) float64, z []float64) []float64 {
	g := make([]float64, len(z))
	lr, prev := 0.01, math.Inf(-1)
	for range 20000 {
		lp := f(z, g)
		if lp < prev {
			lr *= 0.5
		}
		prev = lp
		var gn float64
		for i := range z {
			z[i] += lr * g[i]
			gn += g[i] * g[i]
		}
		if gn < 1e-14 {
			break
		}
	}
	return z
}

// BenchmarkLoadAll reads, preprocesses and builds all twelve tasks.
func BenchmarkLoadAll(b *testing.B) {
	dir := uciTestdata
	keys := Keys()
	for b.Loop() {
		for _, k := range keys {
			if _, err := Load(dir, k); err != nil {
				b.Fatal(err)
			}
		}
	}
}
