package datasets

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/afin-bench/afin/factor"
)

// Heterogeneous is the Likelihood value of the two mixed-likelihood tasks
// (Table 6 writes "Heterogeneous"); Info.Likelihoods lists their families.
const Heterogeneous = "heterogeneous"

// Info describes one UCI task: its Table 6 row plus the raw file it is
// built from.
type Info struct {
	Key           string   `json:"key"`
	Name          string   `json:"name"`
	D             int      `json:"d"`
	N             int      `json:"n"`
	Prior         string   `json:"prior"`      // prior family, e.g. "diag_laplace"
	Likelihood    string   `json:"likelihood"` // likelihood family, or "heterogeneous"
	Heterogeneous bool     `json:"heterogeneous"`
	Likelihoods   []string `json:"likelihoods"` // the families the factors use
	Response      string   `json:"response"`    // what each observation y is
	File          string   `json:"file"`        // raw file name under <data dir>/<key>/
	URLs          []string `json:"urls"`        // canonical download locations, tried in order
	SHA256        string   `json:"sha256"`      // of the reference copy (SOURCES.md)
	RawRows       int      `json:"raw_rows"`    // data records in the raw file
	RawCols       int      `json:"raw_cols"`    // fields per raw record
}

// column picks one field of a raw record. conv nil means a plain number
// with "?" as missing.
type column struct {
	index int
	name  string
	conv  func(string) (float64, error)
}

type taskKind int

const (
	regressionTask taskKind = iota
	classificationTask
	heterogeneousTask
)

// spec is everything needed to turn one raw file into its task.
type spec struct {
	info       Info
	header     bool
	layout     layout
	covariates []column
	response   column
	kind       taskKind
	// transform maps the raw regression response before standardising
	// (nil = identity).
	transform func(float64) float64
	// topK > 0 keeps only the topK covariates most correlated with the
	// binary label.
	topK      int
	intercept bool
	// continuous is the likelihood family of the real-valued observations
	// of regression and heterogeneous tasks.
	continuous string
}

const (
	// studentTDF is the degrees of freedom of every Student-t in the UCI
	// tasks, prior and likelihood alike (see the package doc).
	studentTDF = 4.0
	// designScale is the simulator's base design scale times √d: rows of
	// the whitened design get second moment designScale²/d per coordinate,
	// as the training designs (facts sheet §8).
	designScale = 0.9
)

const uciArchive = "https://archive.ics.uci.edu/ml/machine-learning-databases/"

func numbered(prefix string, from, to int) []column {
	var cols []column
	for i := from; i <= to; i++ {
		cols = append(cols, column{index: i, name: fmt.Sprintf("%s%d", prefix, i-from+1)})
	}
	return cols
}

func named(names ...string) func(idx ...int) []column {
	return func(idx ...int) []column {
		cols := make([]column, len(idx))
		for i, j := range idx {
			cols[i] = column{index: j, name: names[j]}
		}
		return cols
	}
}

// specs returns the twelve tasks in Table 6 order. It builds fresh values
// on every call so no caller can alter another's view.
func specs() []spec {
	return slices.Concat(regressionSpecs(), classificationSpecs(), heterogeneousSpecs())
}

// regressionSpecs are the five regression tasks (lin_gaussian or
// lin_student_t sites), in Table 6 order.
func regressionSpecs() []spec {
	slump := named("No", "Cement", "Slag", "Fly ash", "Water", "SP", "Coarse Aggr.", "Fine Aggr.", "SLUMP(cm)", "FLOW(cm)", "Compressive Strength (28-day)(Mpa)")
	diabetes := named("AGE", "SEX", "BMI", "BP", "S1", "S2", "S3", "S4", "S5", "S6", "Y")
	yacht := named("lcb", "prismatic_coef", "length_displacement", "beam_draught", "length_beam", "froude", "residuary_resistance")
	machine := named("vendor", "model", "MYCT", "MMIN", "MMAX", "CACH", "CHMIN", "CHMAX", "PRP", "ERP")
	auto := named("mpg", "cylinders", "displacement", "horsepower", "weight", "acceleration", "model_year", "origin", "car_name")
	return []spec{
		{
			info: Info{Key: "concrete_slump", Name: "Concrete Slump", D: 7, N: 103,
				Prior: factor.DiagLaplaceFamily, Likelihood: factor.LinGaussianFamily,
				Response: "slump (cm), standardised",
				File:     "slump_test.data", URLs: []string{uciArchive + "concrete/slump/slump_test.data"},
				SHA256:  "9da600e23a290719300d4c7e2190bc7d02936e7e4f05fb17615cb3e8bdfd9997",
				RawRows: 103, RawCols: 11},
			header: true, layout: commaSeparated,
			covariates: slump(1, 2, 3, 4, 5, 6, 7), response: slump(8)[0],
			kind: regressionTask, continuous: factor.LinGaussianFamily,
		},
		{
			info: Info{Key: "diabetes", Name: "Diabetes", D: 10, N: 442,
				Prior: factor.DiagLaplaceFamily, Likelihood: factor.LinGaussianFamily,
				Response: "disease progression one year after baseline (Y), standardised",
				File:     "diabetes.tab.txt",
				URLs: []string{"https://web.stanford.edu/~hastie/Papers/LARS/diabetes.data",
					"https://www4.stat.ncsu.edu/~boos/var.select/diabetes.tab.txt"},
				SHA256:  "4733febee697862c22139cdac87478a300ce0d101593deb07ed6c0f3328a99cd",
				RawRows: 442, RawCols: 11},
			header: true, layout: whitespaceSeparated,
			covariates: diabetes(0, 1, 2, 3, 4, 5, 6, 7, 8, 9), response: diabetes(10)[0],
			kind: regressionTask, continuous: factor.LinGaussianFamily,
		},
		{
			info: Info{Key: "yacht", Name: "Yacht", D: 6, N: 308,
				Prior: factor.DiagGaussianFamily, Likelihood: factor.LinStudentTFamily,
				Response: "residuary resistance per unit weight of displacement, standardised",
				File:     "yacht_hydrodynamics.data", URLs: []string{uciArchive + "00243/yacht_hydrodynamics.data"},
				SHA256:  "00dfecc0fc01ddd4c90b558a3ac11b246df8ebcfea130724223475a9a67f0ea1",
				RawRows: 308, RawCols: 7},
			layout:     whitespaceSeparated,
			covariates: yacht(0, 1, 2, 3, 4, 5), response: yacht(6)[0],
			kind: regressionTask, continuous: factor.LinStudentTFamily,
		},
		{
			info: Info{Key: "machine_cpu", Name: "Machine CPU", D: 6, N: 209,
				Prior: factor.DiagLaplaceFamily, Likelihood: factor.LinGaussianFamily,
				Response: "published relative performance (PRP), standardised",
				File:     "machine.data", URLs: []string{uciArchive + "cpu-performance/machine.data"},
				SHA256:  "c95f0e52fb8381a14a24aa7e9f4b50f72a08639ecfd8cc619ab779919dbd448b",
				RawRows: 209, RawCols: 10},
			layout:     commaSeparated,
			covariates: machine(2, 3, 4, 5, 6, 7), response: machine(8)[0],
			kind: regressionTask, continuous: factor.LinGaussianFamily,
		},
		{
			info: Info{Key: "auto_mpg", Name: "Auto MPG", D: 7, N: 392,
				Prior: factor.DiagLaplaceFamily, Likelihood: factor.LinGaussianFamily,
				Response: "fuel consumption (miles per gallon), standardised",
				File:     "auto-mpg.data", URLs: []string{uciArchive + "auto-mpg/auto-mpg.data"},
				SHA256:  "48b830e11feee5572525f8f1691ddb9d38d3d7b7063edcd8fca672c2a5e17d8d",
				RawRows: 398, RawCols: 9},
			layout:     autoMPGLayout,
			covariates: auto(1, 2, 3, 4, 5, 6, 7), response: auto(0)[0],
			kind: regressionTask, continuous: factor.LinGaussianFamily,
		},
	}
}

// classificationSpecs are the five classification tasks
// (bernoulli_logit sites), in Table 6 order.
func classificationSpecs() []spec {
	haberman := named("age", "op_year", "pos_nodes", "status")
	parkinsons := named("name", "MDVP:Fo(Hz)", "MDVP:Fhi(Hz)", "MDVP:Flo(Hz)", "MDVP:Jitter(%)", "MDVP:Jitter(Abs)", "MDVP:RAP", "MDVP:PPQ", "Jitter:DDP", "MDVP:Shimmer", "MDVP:Shimmer(dB)", "Shimmer:APQ3", "Shimmer:APQ5", "MDVP:APQ", "Shimmer:DDA", "NHR", "HNR", "status", "RPDE", "DFA", "spread1", "spread2", "D2", "PPE")
	heart := named("age", "sex", "cp", "trestbps", "chol", "fbs", "restecg", "thalach", "exang", "oldpeak", "slope", "ca", "thal", "num")
	seeds := named("area", "perimeter", "compactness", "kernel_length", "kernel_width", "asymmetry", "groove_length", "class")
	return []spec{
		{
			info: Info{Key: "haberman", Name: "Haberman", D: 3, N: 306,
				Prior: factor.DiagGaussianFamily, Likelihood: factor.BernoulliLogitFamily,
				Response: "1 = died within 5 years of the operation (status 2), 0 = survived",
				File:     "haberman.data", URLs: []string{uciArchive + "haberman/haberman.data"},
				SHA256:  "b4b7a32586a5668f9f4d6dc8be9d1bc8cd4822523affb1f6b5bfc350681ef3e2",
				RawRows: 306, RawCols: 4},
			layout:     commaSeparated,
			covariates: haberman(0, 1, 2),
			response:   column{index: 3, name: "died_within_5y", conv: categorical(map[string]float64{"1": 0, "2": 1})},
			kind:       classificationTask,
		},
		{
			info: Info{Key: "sonar", Name: "Sonar top-8", D: 8, N: 208,
				Prior: factor.DiagStudentTFamily, Likelihood: factor.BernoulliLogitFamily,
				Response: "1 = metal cylinder (mine, M), 0 = rock (R)",
				File:     "sonar.all-data", URLs: []string{uciArchive + "undocumented/connectionist-bench/sonar/sonar.all-data"},
				SHA256:  "e90434cdbf00fcf93ffa911fe447ae25606979658e60f1d32e155c3b5240234d",
				RawRows: 208, RawCols: 61},
			layout:     commaSeparated,
			covariates: numbered("band", 0, 59),
			response:   column{index: 60, name: "mine", conv: categorical(map[string]float64{"M": 1, "R": 0})},
			kind:       classificationTask, topK: 8,
		},
		{
			info: Info{Key: "parkinsons", Name: "Parkinsons Voice top-8", D: 8, N: 195,
				Prior: factor.DiagGaussianFamily, Likelihood: factor.BernoulliLogitFamily,
				Response: "1 = Parkinson's disease (status 1), 0 = healthy",
				File:     "parkinsons.data", URLs: []string{uciArchive + "parkinsons/parkinsons.data"},
				SHA256:  "a36116c2deac07895b79ce97a2f99a1b3720ac4892995ff5c3b9ccb397ed2bc5",
				RawRows: 195, RawCols: 24},
			header: true, layout: commaSeparated,
			covariates: parkinsons(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 18, 19, 20, 21, 22, 23),
			response:   column{index: 17, name: "status", conv: categorical(map[string]float64{"0": 0, "1": 1})},
			kind:       classificationTask, topK: 8,
		},
		{
			info: Info{Key: "heart", Name: "Heart", D: 13, N: 297,
				Prior: factor.DiagGaussianFamily, Likelihood: factor.BernoulliLogitFamily,
				Response: "1 = heart disease present (num 1-4), 0 = absent (num 0)",
				File:     "processed.cleveland.data", URLs: []string{uciArchive + "heart-disease/processed.cleveland.data"},
				SHA256:  "a74b7efa387bc9d108d7d0115d831fe9b414b29ae7124f331b622b4efa0427c8",
				RawRows: 303, RawCols: 14},
			layout:     commaSeparated,
			covariates: heart(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12),
			response:   column{index: 13, name: "disease", conv: threshold(func(v float64) bool { return v > 0 })},
			kind:       classificationTask,
		},
		{
			info: Info{Key: "seeds", Name: "Seeds Binary", D: 7, N: 210,
				Prior: factor.DiagGaussianFamily, Likelihood: factor.BernoulliLogitFamily,
				Response: "1 = Kama wheat (class 1), 0 = Rosa or Canadian",
				File:     "seeds_dataset.txt", URLs: []string{uciArchive + "00236/seeds_dataset.txt"},
				SHA256:  "1f3f83c0d8485ae9148061389d19628607e3f5660e3d6f40ec9102fb398bb12f",
				RawRows: 210, RawCols: 8},
			layout:     whitespaceSeparated,
			covariates: seeds(0, 1, 2, 3, 4, 5, 6),
			response:   column{index: 7, name: "kama", conv: categorical(map[string]float64{"1": 1, "2": 0, "3": 0})},
			kind:       classificationTask,
		},
	}
}

// heterogeneousSpecs are the two tasks that mix a continuous and a
// binary response, in Table 6 order.
func heterogeneousSpecs() []spec {
	fires := named("X", "Y", "month", "day", "FFMC", "DMC", "DC", "ISI", "temp", "RH", "wind", "rain", "area")
	mesquite := named("obs", "group", "diam1", "diam2", "total_height", "canopy_height", "density", "weight")
	return []spec{
		{
			info: Info{Key: "forest_fires", Name: "Forest Fires Hetero", D: 8, N: 517,
				Prior: factor.DiagStudentTFamily, Likelihood: Heterogeneous, Heterogeneous: true,
				Response: "even rows: log(1+area) standardised (lin_student_t); odd rows: 1 = area above the median 0.52 ha (bernoulli_logit)",
				File:     "forestfires.csv", URLs: []string{uciArchive + "forest-fires/forestfires.csv"},
				SHA256:  "0d6586a1fa52f55bef48578aef14eb97273f1e9330e1a53423df497a77065253",
				RawRows: 517, RawCols: 13},
			header: true, layout: commaSeparated,
			covariates: fires(4, 5, 6, 7, 8, 9, 10, 11), response: fires(12)[0],
			kind: heterogeneousTask, continuous: factor.LinStudentTFamily,
			transform: math.Log1p,
		},
		{
			info: Info{Key: "mesquite", Name: "Mesquite Hetero", D: 7, N: 46,
				Prior: factor.DiagGaussianFamily, Likelihood: Heterogeneous, Heterogeneous: true,
				Response: "even rows: log(weight) standardised (lin_gaussian); odd rows: 1 = weight above the median (bernoulli_logit)",
				File:     "mesquite.dat",
				URLs: []string{"https://raw.githubusercontent.com/avehtari/ROS-Examples/master/Mesquite/data/mesquite.dat",
					"http://www.stat.columbia.edu/~gelman/arm/examples/mesquite/mesquite.dat"},
				SHA256:  "62c5d1a30aeb26aea7288ef97f350eb073da5c6546fa08735a57c70f9e70585f",
				RawRows: 46, RawCols: 8},
			header: true, layout: whitespaceSeparated,
			covariates: append([]column{{index: 1, name: "group_MCD", conv: categorical(map[string]float64{"MCD": 1, "ALS": 0})}},
				mesquite(2, 3, 4, 5, 6)...),
			response: mesquite(7)[0],
			kind:     heterogeneousTask, continuous: factor.LinGaussianFamily,
			transform: math.Log, intercept: true,
		},
	}
}

// fill completes the derived fields of every spec's Info.
func (s *spec) fill() {
	switch s.kind {
	case regressionTask:
		s.info.Likelihoods = []string{s.continuous}
	case classificationTask:
		s.info.Likelihoods = []string{factor.BernoulliLogitFamily}
	case heterogeneousTask:
		s.info.Likelihoods = []string{s.continuous, factor.BernoulliLogitFamily}
	}
}

// List returns the twelve UCI tasks in the order of the paper's Table 6.
func List() []Info {
	ss := specs()
	out := make([]Info, len(ss))
	for i := range ss {
		ss[i].fill()
		out[i] = ss[i].info
	}
	return out
}

// Keys returns the task keys in Table 6 order.
func Keys() []string {
	var keys []string
	for _, in := range List() {
		keys = append(keys, in.Key)
	}
	return keys
}

// Lookup returns the Info of one task key.
func Lookup(key string) (Info, error) {
	s, err := lookupSpec(key)
	if err != nil {
		return Info{}, err
	}
	return s.info, nil
}

func lookupSpec(key string) (*spec, error) {
	ss := specs()
	for i := range ss {
		if ss[i].info.Key == key {
			ss[i].fill()
			return &ss[i], nil
		}
	}
	return nil, fmt.Errorf("unknown UCI task %q (valid: %s)", key, strings.Join(keysOf(ss), ", "))
}

func keysOf(ss []spec) []string {
	keys := make([]string, len(ss))
	for i := range ss {
		keys[i] = ss[i].info.Key
	}
	return keys
}
