package afin

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/afin-bench/afin/afin/arch"
	"github.com/afin-bench/afin/afin/torchimport"
	"github.com/afin-bench/afin/afin/torchimport/torchtest"
	"github.com/afin-bench/afin/factor"
)

// fixtureDir holds the outputs of the authors' PyTorch forward pass on
// random weights (see its README), in the repository.
var fixtureDir = filepath.Join("..", "testdata", "torch-afin")

type fixtureCase struct {
	Task   json.RawMessage `json:"task"`
	Expect struct {
		Mean      []float64   `json:"mean"`
		Precision [][]float64 `json:"precision"`
		Z         [][]float64 `json:"z"`
		LogQ      []float64   `json:"log_q"`
	} `json:"expect"`
}

func loadFixtureCases(t *testing.T, decoder string) []fixtureCase {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(fixtureDir, "cases-"+decoder+".json"))
	if err != nil {
		t.Fatalf("fixtures of the authors' PyTorch network: %v", err)
	}
	var f struct {
		Cases []fixtureCase `json:"cases"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	return f.Cases
}

// fixtureErrors are the worst disagreements with the reference over all
// cases: relative norm-wise error of mean and precision, absolute error of
// log q.
type fixtureErrors struct{ mean, prec, logQ float64 }

func relErr(got, want []float64) float64 {
	var num, den float64
	for i := range want {
		num += (got[i] - want[i]) * (got[i] - want[i])
		den += want[i] * want[i]
	}
	return math.Sqrt(num) / math.Max(math.Sqrt(den), 1e-30)
}

// compareFixture runs the model on every case and returns the worst errors.
func compareFixture(m *Model, cases []fixtureCase) (fixtureErrors, error) {
	var e fixtureErrors
	for k, c := range cases {
		task, err := factor.ParseTask(c.Task)
		if err != nil {
			return e, fmt.Errorf("case %d: %w", k, err)
		}
		var z []float64
		for _, row := range c.Expect.Z {
			z = append(z, row...)
		}
		var lq []float64
		if m.Cfg.Decoder == "flow" {
			if lq, err = m.LogQFlow(task, z); err != nil {
				return e, fmt.Errorf("case %d: %w", k, err)
			}
		} else {
			gs, err := m.Forward([]*factor.Task{task})
			if err != nil {
				return e, fmt.Errorf("case %d: %w", k, err)
			}
			g := gs[0]
			var want []float64
			for _, row := range c.Expect.Precision {
				want = append(want, row...)
			}
			e.mean = math.Max(e.mean, relErr(g.Mean, c.Expect.Mean))
			e.prec = math.Max(e.prec, relErr(g.Precision, want))
			for s := range c.Expect.Z {
				lq = append(lq, g.LogQ(z[s*task.D:(s+1)*task.D]))
			}
		}
		for s, want := range c.Expect.LogQ {
			e.logQ = math.Max(e.logQ, math.Abs(lq[s]-want))
		}
	}
	return e, nil
}

// importFixture imports a fixture run directory through the portable
// checkpoint format and loads it.
func importFixture(t *testing.T, run string) *Model {
	t.Helper()
	out := filepath.Join(t.TempDir(), "ckpt")
	if _, err := ImportRun(filepath.Join(fixtureDir, run), out); err != nil {
		t.Fatal(err)
	}
	m, err := Load(out, EngineChoice{})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// The network is the authors': imported weights reproduce their forward
// pass (mean, precision to 1e-4 relative, log q to 1e-3 absolute).
func TestFixtureMatchesReference(t *testing.T) {
	for _, dec := range []string{"gaussian", "flow"} {
		t.Run(dec, func(t *testing.T) {
			cases := loadFixtureCases(t, dec)
			m := importFixture(t, "run-"+dec)
			e, err := compareFixture(m, cases)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s decoder, %d cases: max rel. error mean %.3g, precision %.3g; max abs. error log q %.3g", dec, len(cases), e.mean, e.prec, e.logQ)
			if e.mean > 1e-4 || e.prec > 1e-4 || e.logQ > 1e-3 {
				t.Errorf("disagrees with the reference: mean %.3g, precision %.3g (tol 1e-4), log q %.3g (tol 1e-3)", e.mean, e.prec, e.logQ)
			}
		})
	}
}

// The comparison has teeth: one weight mapped wrongly (two tensors of the
// same shape swapped, or a square Linear weight left untransposed) is
// caught.
func TestFixtureCatchesMiswiredWeight(t *testing.T) {
	tests := []struct {
		dec, a, b string // b == "" means transpose a
	}{
		{"gaussian", "merge/0/q/pair/l1/w", "merge/0/k/pair/l1/w"},
		{"gaussian", "encoder/1/node/l1/w", ""},
		{"flow", "couplings/0/node/l0/b", "couplings/1/node/l0/b"},
		{"flow", "merge/1/ln_ffn_node/g", "merge/1/ln_ffn_pair/g"},
	}
	for _, tc := range tests {
		cases := loadFixtureCases(t, tc.dec)
		good := importFixture(t, "run-"+tc.dec)
		w := slices.Clone(good.wdata)
		ia, ib := -1, -1
		params := arch.MustNew(good.Cfg).Tensors()
		for i, p := range params {
			switch p.Name {
			case tc.a:
				ia = i
			case tc.b:
				ib = i
			}
		}
		if ia < 0 || (tc.b != "" && ib < 0) {
			t.Fatalf("tensors %s, %s not declared", tc.a, tc.b)
		}
		if tc.b != "" {
			w[ia], w[ib] = w[ib], w[ia]
		} else {
			n := params[ia].Shape[0]
			tr := make([]float32, len(w[ia]))
			for i := range n {
				for j := range n {
					tr[j*n+i] = w[ia][i*n+j]
				}
			}
			w[ia] = tr
		}
		bad, err := newModel(good.Dir, good.Cfg, good.Step, w, EngineChoice{})
		if err != nil {
			t.Fatal(err)
		}
		e, err := compareFixture(bad, cases)
		if err != nil {
			t.Fatal(err)
		}
		if e.mean <= 1e-4 && e.prec <= 1e-4 && e.logQ <= 1e-3 {
			t.Errorf("%s: miswiring %s/%s not detected (errors %+v)", tc.dec, tc.a, tc.b, e)
		}
	}
}

// A run of another size, made by editing the fixture's config.json and
// writing matching random weights, imports with the widths, depth and
// head count of its config and runs.
func TestImportEditedFixtureConfig(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(fixtureDir, "run-flow", "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rc map[string]any
	if err := json.Unmarshal(data, &rc); err != nil {
		t.Fatal(err)
	}
	args := rc["args"].(map[string]any)
	args["feat_dim"], args["merge_model_dim"], args["box_depth"], args["merge_num_layers"] = 16.0, 40.0, 3.0, 1.0
	args["box_num_layers"], args["flow_num_steps"], args["flow_context_dim"] = 2.0, 3.0, nil
	want := Config{Name: "imported", Decoder: "flow", C: 16, AdapterH: 16, AdapterL: 2, EncLayers: 3, BoxH: 24, BoxL: 2,
		Blocks: 1, Heads: 8, MergeH: 40, MergeL: 2, DecH: 20, DecL: 3, OffdiagMul: 0.1,
		FlowG: 24, FlowH: 16, FlowL: 2, FlowSteps: 3} // G falls back to hidden_dim = 24
	decl := arch.MustNew(want)
	rng := rand.New(rand.NewPCG(9, 9))
	var sd []torchtest.Tensor
	for _, k := range torchimport.Keys(decl) {
		shape, n := k.Tensor.Shape, k.Tensor.Size()
		if k.Transpose {
			shape = []int{shape[1], shape[0]}
		}
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(0.3 * rng.NormFloat64())
		}
		sd = append(sd, torchtest.Tensor{Name: k.Torch, Shape: shape, Data: v})
	}
	run := filepath.Join(t.TempDir(), "run")
	if err := torchtest.WriteRun(run, args, 1, map[string][]torchtest.Tensor{"ema_model_state_dict": sd}); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "ck")
	if _, err := ImportRun(run, out); err != nil {
		t.Fatal(err)
	}
	m, err := Load(out, EngineChoice{})
	if err != nil {
		t.Fatal(err)
	}
	if m.Cfg != want {
		t.Fatalf("config %+v, want %+v", m.Cfg, want)
	}
	cases := loadFixtureCases(t, "flow")
	task, err := factor.ParseTask(cases[5].Task)
	if err != nil {
		t.Fatal(err)
	}
	lq, err := m.LogQFlow(task, make([]float64, 2*task.D))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range lq {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			t.Fatalf("log q %v", lq)
		}
	}
}

// The same run imported from two places gives the same checkpoint hash.
func TestImportHashIndependentOfPath(t *testing.T) {
	src := filepath.Join(fixtureDir, "run-gaussian")
	if _, err := os.Stat(src); err != nil {
		t.Fatal(err)
	}
	copyDir := filepath.Join(t.TempDir(), "elsewhere")
	os.MkdirAll(copyDir, 0o755)
	for _, f := range []string{"config.json", "final.pt"} {
		data, _ := os.ReadFile(filepath.Join(src, f))
		os.WriteFile(filepath.Join(copyDir, f), data, 0o644)
	}
	var hashes []string
	for _, run := range []string{src, copyDir} {
		out := filepath.Join(t.TempDir(), "ck")
		if _, err := ImportRun(run, out); err != nil {
			t.Fatal(err)
		}
		m, err := Load(out, EngineChoice{})
		if err != nil {
			t.Fatal(err)
		}
		hashes = append(hashes, m.Hash)
	}
	if hashes[0] != hashes[1] {
		t.Errorf("hashes %v differ", hashes)
	}
}
