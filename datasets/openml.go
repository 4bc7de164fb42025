package datasets

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/afin-bench/afin/factor"
	"github.com/afin-bench/afin/internal/moments"
	"github.com/afin-bench/afin/internal/streams"
)

// The OpenML posterior-predictive experiment (paper App. E.6, tables
// openml-pfn-datasets and openml-pfn-full): 16 binary OpenML datasets,
// each a Bayesian logistic regression z ~ N(0, I), y_i | x_i, z ~
// Bernoulli(σ(x_iᵀ z)) on a stratified 70/30 split. Preprocessing, read
// from the paper and, where the paper is silent, from the authors'
// benchmarks/compare_tabpfn_openml.py (facts sheet §12):
//
//  1. Drop every row with a missing value ("?"), target included.
//  2. One-hot code every nominal input with one column per category that
//     occurs in the remaining rows (no category dropped), in declaration
//     order; numeric inputs stay one column each. This gives d_feat.
//  3. Label 1 is the target's second declared value (pandas' category
//     code order); the metrics do not depend on which class is 1, as the
//     model is symmetric under y → 1−y, z → −z.
//  4. Stratified split: ceil(0.3·N) test rows, each class's share of
//     them rounded as sklearn's train_test_split does; which rows go to
//     test is a seeded shuffle per class (our own stream, so the rows, not
//     the sizes, differ from the authors' sklearn split).
//  5. Every column (one-hot columns too, as the authors' code does) is
//     standardised with the training split's mean and population sd
//     (floored at 1e-6), then multiplied by 2/√d_feat, and a constant 1
//     column (the intercept, unscaled) is put first: d_model = d_feat + 1.
//
// TabPFN, in the paper, saw the standardised features without the 2/√d
// scaling and the intercept; it does not run here.

// OpenMLInfo describes one dataset and the sizes the paper's table
// openml-pfn-datasets gives it.
type OpenMLInfo struct {
	Name string // OpenML name; the directory under the data dir
	ID   int    // OpenML dataset ID
	File string // raw file inside the directory (.arff, or .csv for pc4)
	// Target is the label attribute (the last column); Labels its two
	// values in declaration order (label 1 is the second). For the CSV
	// they declare the target's values, which the CSV does not.
	Target string
	Labels [2]string
	// The paper's processed sizes.
	NTrain, NTest, DFeat int
}

// DModel is the latent dimension: the features plus the intercept.
func (i OpenMLInfo) DModel() int { return i.DFeat + 1 }

// openmlInfos are table openml-pfn-datasets, in its order.
var openmlInfos = []OpenMLInfo{
	{"breast-w", 15, "breast-w.arff", "Class", [2]string{"benign", "malignant"}, 478, 205, 9},
	{"credit-approval", 29, "credit-approval.arff", "class", [2]string{"+", "-"}, 457, 196, 46},
	{"credit-g", 31, "credit-g.arff", "class", [2]string{"good", "bad"}, 700, 300, 61},
	{"diabetes", 37, "diabetes.arff", "class", [2]string{"tested_negative", "tested_positive"}, 537, 231, 8},
	{"haberman", 43, "haberman.arff", "Survival_status", [2]string{"1", "2"}, 214, 92, 14},
	{"heart-statlog", 53, "heart-statlog.arff", "class", [2]string{"absent", "present"}, 189, 81, 13},
	{"pc4", 1049, "pc4.csv", "Class", [2]string{"FALSE", "TRUE"}, 1020, 438, 37},
	{"pc3", 1050, "pc3.arff", "c", [2]string{"FALSE", "TRUE"}, 1094, 469, 37},
	{"kc2", 1063, "kc2.arff", "problems", [2]string{"no", "yes"}, 365, 157, 21},
	{"pc1", 1068, "pc1.arff", "defects", [2]string{"false", "true"}, 776, 333, 21},
	{"banknote-authentication", 1462, "banknote-authentication.arff", "Class", [2]string{"1", "2"}, 960, 412, 4},
	{"blood-transfusion-service-center", 1464, "blood-transfusion-service-center.arff", "Class", [2]string{"1", "2"}, 523, 225, 4},
	{"climate-model-simulation-crashes", 1467, "climate-model-simulation-crashes.arff", "Class", [2]string{"1", "2"}, 378, 162, 20},
	{"ilpd", 1480, "ilpd.arff", "Class", [2]string{"1", "2"}, 408, 175, 11},
	{"qsar-biodeg", 1494, "qsar-biodeg.arff", "Class", [2]string{"1", "2"}, 738, 317, 41},
	{"wdbc", 1510, "wdbc.arff", "Class", [2]string{"1", "2"}, 398, 171, 30},
}

// OpenMLList returns the 16 datasets in the paper's table order.
func OpenMLList() []OpenMLInfo { return slices.Clone(openmlInfos) }

// LookupOpenML returns the dataset called name.
func LookupOpenML(name string) (OpenMLInfo, error) {
	for _, in := range openmlInfos {
		if in.Name == name {
			return in, nil
		}
	}
	names := make([]string, len(openmlInfos))
	for i, in := range openmlInfos {
		names[i] = in.Name
	}
	return OpenMLInfo{}, fmt.Errorf("unknown OpenML dataset %q (valid: %s)", name, strings.Join(names, ", "))
}

// OpenMLSplit is one dataset after preprocessing: the model's design rows
// (intercept first) and 0/1 labels of both splits.
type OpenMLSplit struct {
	Info          OpenMLInfo
	Seed          uint64
	Features      []string // the d_feat feature names (one-hot: "attr=value")
	XTrain, XTest [][]float64
	YTrain, YTest []float64
	// ConstantInTrain names the features constant on the training split
	// (sd floored at 1e-6, as the authors' code does); a test row that
	// differs there gets a huge standardised value. Empty on the shipped
	// data at the shipped seeds (a test checks), kept so a caller can warn.
	ConstantInTrain []string
}

// DFeat is the processed feature count.
func (s *OpenMLSplit) DFeat() int { return len(s.Features) }

// Task is the logistic-regression task on the training split: a standard
// Gaussian prior and one bernoulli_logit factor per training row.
func (s *OpenMLSplit) Task() *factor.Task {
	d := len(s.Features) + 1
	loc, scale := make([]float64, d), make([]float64, d)
	for i := range scale {
		scale[i] = 1
	}
	t := &factor.Task{Name: "openml/" + s.Info.Name, D: d, Prior: &factor.DiagGaussian{Loc: loc, Scale: scale}}
	for i, x := range s.XTrain {
		t.Factors = append(t.Factors, &factor.BernoulliLogit{X: x, Y: s.YTrain[i]})
	}
	return t
}

// EnvOpenMLDir names the environment variable that points at another
// copy of the OpenML raw files (the CLI reads it).
const EnvOpenMLDir = "AFIN_OPENML_DIR"

// CheckOpenMLDir checks that dir (BuiltIn: the copy built into the
// binary) holds the raw files of the named datasets; the error (an
// ErrNoData) lists the missing ones.
func CheckOpenMLDir(dir string, names []string) error {
	var missing []string
	for _, n := range names {
		in, err := LookupOpenML(n)
		if err != nil {
			return err
		}
		if err := statRaw(dir, "openml", in.Name, in.File); err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("OpenML data directory %s: %w", dir, err)
			}
			missing = append(missing, filepath.Join(in.Name, in.File))
		}
	}
	if len(missing) > 0 {
		where := dir
		if dir == BuiltIn {
			where = builtInName("openml")
		}
		return &noDataError{fmt.Errorf("OpenML data directory %s lacks %d of %d raw files (%s): pass --data-dir or set %s to a directory holding <name>/<file>, or unset both to use %s",
			where, len(missing), len(names), joinShort(missing, 3), EnvOpenMLDir, builtInName("openml"))}
	}
	return nil
}

// ErrBadData marks a raw file that is there but cannot be the dataset: a
// line the ARFF or CSV reader refuses, or sizes other than the paper's.
var ErrBadData = errors.New("bad OpenML raw file")

// LoadOpenML reads dataset name from dir (BuiltIn: the copy built into
// the binary) and preprocesses it with the split of seed. The sizes must
// be the paper's; anything else is an error naming the file.
func LoadOpenML(dir, name string, seed uint64) (*OpenMLSplit, error) {
	in, err := LookupOpenML(name)
	if err != nil {
		return nil, err
	}
	path := rawPath(dir, "openml", in.Name, in.File)
	data, err := readRaw(dir, "openml", in.Name, in.File)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, &noDataError{fmt.Errorf("%s: raw file %s not found", name, path)}
		}
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	var a *ARFF
	if strings.HasSuffix(in.File, ".csv") {
		a, err = parseOpenMLCSV(data, in)
	} else {
		a, err = ParseARFF(data)
	}
	if err != nil {
		// The parsers' errors start with a line number: path:line.
		return nil, fmt.Errorf("%w: %s: %s:%w", ErrBadData, name, path, err)
	}
	s, err := preprocessOpenML(a, in, seed)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %s: %w", ErrBadData, name, path, err)
	}
	return s, nil
}

// preprocessOpenML applies steps 1-5 of the file comment and checks the
// sizes against the paper's.
func preprocessOpenML(a *ARFF, in OpenMLInfo, seed uint64) (*OpenMLSplit, error) {
	last := len(a.Attributes) - 1
	target := a.Attributes[last]
	if target.Name != in.Target || !slices.Equal(target.Values, in.Labels[:]) {
		return nil, fmt.Errorf("last attribute is %s %v, want the target %s %v", target.Name, target.Values, in.Target, in.Labels)
	}
	var rows [][]float64
	for _, r := range a.Rows {
		if !slices.ContainsFunc(r, math.IsNaN) {
			rows = append(rows, r)
		}
	}
	if len(rows) != in.NTrain+in.NTest {
		return nil, fmt.Errorf("%d complete rows, want %d (the paper's N_tr + N_te): is this OpenML's file?", len(rows), in.NTrain+in.NTest)
	}
	cols := oneHotColumns(a.Attributes[:last], rows)
	if len(cols) != in.DFeat {
		return nil, fmt.Errorf("%d features after one-hot coding, want d_feat = %d (the paper's)", len(cols), in.DFeat)
	}
	raw := make([][]float64, len(rows))
	y := make([]float64, len(rows))
	for i, r := range rows {
		raw[i] = make([]float64, len(cols))
		for c, cl := range cols {
			switch {
			case cl.level < 0:
				raw[i][c] = r[cl.attr]
			case int(r[cl.attr]) == cl.level:
				raw[i][c] = 1
			}
		}
		y[i] = r[last]
	}
	return standardiseOpenML(in, seed, cols, raw, y)
}

// oneHotCol is one feature column: a numeric attribute, or one category
// of a nominal one.
type oneHotCol struct {
	attr  int
	level int // nominal category, -1 for a numeric column
	name  string
}

// oneHotColumns codes the attributes one-hot over the categories present
// in the complete rows.
func oneHotColumns(attrs []Attribute, rows [][]float64) []oneHotCol {
	var cols []oneHotCol
	for j, at := range attrs {
		if !at.Nominal() {
			cols = append(cols, oneHotCol{j, -1, at.Name})
			continue
		}
		for k, v := range at.Values {
			if slices.ContainsFunc(rows, func(r []float64) bool { return int(r[j]) == k }) {
				cols = append(cols, oneHotCol{j, k, at.Name + "=" + v})
			}
		}
	}
	return cols
}

// standardiseOpenML splits the coded rows (raw, labels y) and scales
// each column by the training rows' mean and sd, times 2/√d_feat, after
// an intercept column.
func standardiseOpenML(in OpenMLInfo, seed uint64, cols []oneHotCol, raw [][]float64, y []float64) (*OpenMLSplit, error) {
	train, test, err := stratifiedSplit(y, testSize(len(y)), streams.New(seed, streams.OpenMLSplit).Perm)
	if err != nil {
		return nil, err
	}
	if len(train) != in.NTrain || len(test) != in.NTest {
		return nil, fmt.Errorf("split gives %d training and %d test rows, want the paper's N_tr = %d, N_te = %d", len(train), len(test), in.NTrain, in.NTest)
	}
	s := &OpenMLSplit{Info: in, Seed: seed}
	for _, c := range cols {
		s.Features = append(s.Features, c.name)
	}
	mean, sd := make([]float64, len(cols)), make([]float64, len(cols))
	column := make([]float64, len(train))
	for c := range cols {
		for k, i := range train {
			column[k] = raw[i][c]
		}
		// The population sd (divisor n), as the UCI columns (preprocess.go).
		mean[c], sd[c] = moments.MeanSD(column, 0)
		if sd[c] < 1e-6 {
			sd[c] = 1e-6
			s.ConstantInTrain = append(s.ConstantInTrain, cols[c].name)
		}
	}
	scale := 2 / math.Sqrt(float64(len(cols)))
	design := func(i int) []float64 {
		x := make([]float64, len(cols)+1)
		x[0] = 1
		for c := range cols {
			x[c+1] = scale * (raw[i][c] - mean[c]) / sd[c]
		}
		return x
	}
	for _, i := range train {
		s.XTrain = append(s.XTrain, design(i))
		s.YTrain = append(s.YTrain, y[i])
	}
	for _, i := range test {
		s.XTest = append(s.XTest, design(i))
		s.YTest = append(s.YTest, y[i])
	}
	return s, nil
}

// stratifiedSplit returns the train and test row indices (ascending) of a
// stratified split with nTest test rows: each class gets its proportional
// share of the test rows, floored, and the rows left over go to the
// classes with the largest remainders (ties to the larger class, then the
// lower label), as sklearn's stratified split sizes them (it breaks ties
// at random). Which
// of a class's rows are test is decided by perm(n) over the class's rows.
func stratifiedSplit(y []float64, nTest int, perm func(int) []int) (train, test []int, err error) {
	byClass := map[float64][]int{}
	for i, v := range y {
		byClass[v] = append(byClass[v], i)
	}
	labels := make([]float64, 0, len(byClass))
	for v := range byClass {
		labels = append(labels, v)
	}
	slices.Sort(labels)
	if len(labels) < 2 {
		return nil, nil, fmt.Errorf("only one class (%v) among the complete rows", labels)
	}
	n := len(y)
	share := make(map[float64]int, len(labels))
	left := nTest
	for _, v := range labels {
		share[v] = len(byClass[v]) * nTest / n
		left -= share[v]
	}
	order := slices.Clone(labels)
	slices.SortStableFunc(order, func(a, b float64) int {
		ra, rb := len(byClass[a])*nTest%n, len(byClass[b])*nTest%n
		if ra != rb {
			return rb - ra
		}
		return len(byClass[b]) - len(byClass[a])
	})
	for k := 0; k < left; k++ {
		share[order[k%len(order)]]++
	}
	for _, v := range labels {
		rows := byClass[v]
		if share[v] >= len(rows) || share[v] == 0 {
			return nil, nil, fmt.Errorf("class %v has %d rows: too few to put %d in the test split and keep some for training", v, len(rows), share[v])
		}
		p := perm(len(rows))
		for k, j := range p {
			if k < share[v] {
				test = append(test, rows[j])
			} else {
				train = append(train, rows[j])
			}
		}
	}
	slices.Sort(train)
	slices.Sort(test)
	return train, test, nil
}

// testSize is sklearn's ceil(0.3·n) test rows, in integers.
func testSize(n int) int { return (3*n + 9) / 10 }

// parseOpenMLCSV parses pc4's CSV (a header row, then numbers, the
// target last with the values in.Labels) as the ARFF OpenML serves. Its
// errors start with a line number, as ParseARFF's do.
func parseOpenMLCSV(data []byte, in OpenMLInfo) (*ARFF, error) {
	lines := strings.Split(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n")
	a := &ARFF{Relation: in.Name}
	header := true
	for i, line := range lines {
		ln := i + 1
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		fields := strings.Split(line, ",")
		if header {
			for j, f := range fields {
				at := Attribute{Name: strings.Trim(strings.TrimSpace(f), `"`)}
				if j == len(fields)-1 {
					at.Values = in.Labels[:]
				}
				a.Attributes = append(a.Attributes, at)
			}
			header = false
			continue
		}
		if len(fields) != len(a.Attributes) {
			return nil, errAt(ln, "%d fields, want %d (the header's)", len(fields), len(a.Attributes))
		}
		row := make([]float64, len(fields))
		for j, f := range fields {
			f = strings.Trim(strings.TrimSpace(f), `"`)
			at := a.Attributes[j]
			switch {
			case f == "?" || f == "":
				row[j] = math.NaN()
			case at.Nominal():
				k := indexOf(at.Values, f)
				if k < 0 {
					return nil, errAt(ln, "%s: value %q is not one of %v", at.Name, f, at.Values)
				}
				row[j] = float64(k)
			default:
				v, err := strconv.ParseFloat(f, 64)
				if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
					return nil, errAt(ln, "%s: %q is not a finite number", at.Name, f)
				}
				row[j] = v
			}
		}
		a.Rows = append(a.Rows, row)
		a.Lines = append(a.Lines, ln)
	}
	if len(a.Rows) == 0 {
		return nil, errAt(len(lines), "no data rows")
	}
	return a, nil
}
