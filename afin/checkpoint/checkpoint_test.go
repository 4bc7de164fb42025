package checkpoint

import (
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/afin-bench/afin/afin/arch"
	"github.com/afin-bench/afin/factor"
)

func randomNet(cfg arch.Config) *arch.Network {
	n := arch.MustNew(cfg)
	n.Init(rand.New(rand.NewPCG(1, 2)))
	return n
}

// Small weights fit in model.safetensors; the paper's (18 MB) are sharded
// at 16 MiB with an index, and both read back exactly with a stable hash.
func TestInferenceRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		cfg    arch.Config
		shards int
	}{{arch.SmallConfig("flow"), 1}, {arch.PaperConfig("gaussian"), 2}} {
		dir := t.TempDir()
		net := randomNet(tc.cfg)
		m := Manifest{Support: FullSupport(1, 8, 1, 64), Step: 3, Weights: "ema", Source: "test"}
		if err := WriteInference(dir, m, net); err != nil {
			t.Fatal(err)
		}
		shards, _ := filepath.Glob(filepath.Join(dir, "*.safetensors"))
		if len(shards) != tc.shards {
			t.Errorf("%s: %d weight files, want %d", tc.cfg.Name, len(shards), tc.shards)
		}
		for _, s := range shards {
			if fi, _ := os.Stat(s); fi.Size() > MaxShardBytes+1<<20 {
				t.Errorf("%s is %d bytes", s, fi.Size())
			}
		}
		got, back, err := ReadInference(dir)
		if err != nil {
			t.Fatal(err)
		}
		if got.Config != tc.cfg || got.Step != 3 || got.Support.DMax != 8 {
			t.Errorf("manifest %+v", got)
		}
		for i, ts := range back.Tensors() {
			if !slices.Equal(ts.Data, net.Tensors()[i].Data) {
				t.Fatalf("%s differs", ts.Name)
			}
		}
		h1, _ := Hash(dir)
		h2, _ := Hash(dir)
		if h1 != h2 || len(h1) != 64 {
			t.Errorf("hash %q, %q", h1, h2)
		}
		// Tampered weights are caught by the digest in config.json.
		os.WriteFile(shards[0], append(mustRead(t, shards[0])[:len(mustRead(t, shards[0]))-4], 0, 0, 0, 1), 0o644)
		if _, _, err := ReadInference(dir); err == nil {
			t.Errorf("%s: modified weights accepted", tc.cfg.Name)
		}
	}
}

func mustRead(t *testing.T, path string) []byte {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestLegacyRefusedWithConvertCommand(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, LegacyFile), []byte("gob"), 0o644)
	_, err := ReadManifest(dir)
	if !errors.Is(err, ErrLegacy) || !strings.Contains(err.Error(), "afin checkpoint convert "+dir) {
		t.Errorf("error %v", err)
	}
}

func TestSupportOutside(t *testing.T) {
	s := FullSupport(1, 8, 1, 64)
	s.Likelihoods = []string{factor.LinGaussianFamily}
	r, err := factor.TrainingRanges(s.SimOptions())
	if err != nil {
		t.Fatal(err)
	}
	s.Ranges = r
	prior := func(d int) factor.Prior {
		return &factor.DiagGaussian{Loc: make([]float64, d), Scale: slices.Repeat([]float64{1}, d)}
	}
	lin := func(d int) factor.Likelihood { return &factor.LinGaussian{X: make([]float64, d), Sigma: 0.7} }
	wide := &factor.DiagGaussian{Loc: make([]float64, 4), Scale: slices.Repeat([]float64{10}, 4)}
	tests := []struct {
		task *factor.Task
		want string
	}{
		{&factor.Task{D: 4, Prior: prior(4), Factors: []factor.Likelihood{lin(4)}}, ""},
		{&factor.Task{D: 4, Prior: wide, Factors: []factor.Likelihood{lin(4)}}, "diag_gaussian prior scale 10 outside the training range [0.4493, 1]"},
		{&factor.Task{D: 4, Prior: prior(4), Factors: []factor.Likelihood{&factor.LinGaussian{X: make([]float64, 4), Sigma: 0.05}}}, "lin_gaussian noise scale 0.05 outside"},
		{&factor.Task{D: 9, Prior: prior(9), Factors: []factor.Likelihood{lin(9)}}, "d=9"},
		{&factor.Task{D: 2, Prior: prior(2)}, "N=0"},
		{&factor.Task{D: 2, Prior: prior(2), Factors: []factor.Likelihood{&factor.BernoulliLogit{X: []float64{0, 1}, Y: 1}}}, "bernoulli_logit"},
	}
	for _, tc := range tests {
		got := s.Outside(tc.task)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("Outside = %q, want %q", got, tc.want)
		}
	}
}

// A config.json written before the ranges existed still loads, weights
// verified, and its support answers "support unknown" rather than
// nothing; writing the ranges in afterwards keeps the weights verifiable.
func TestSupportUnknownThenWritten(t *testing.T) {
	dir := t.TempDir()
	net := randomNet(arch.SmallConfig("gaussian"))
	if err := WriteInference(dir, Manifest{Support: FullSupport(1, 8, 1, 64), Step: 3, Weights: "ema", Source: "test"}, net); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, ConfigFile))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), `"ranges"`) {
		t.Fatal("a support without ranges wrote a ranges field")
	}
	m, _, err := ReadInference(dir)
	if err != nil {
		t.Fatal(err)
	}
	task := &factor.Task{D: 2, Prior: &factor.DiagGaussian{Loc: []float64{0, 0}, Scale: []float64{0.7, 0.7}},
		Factors: []factor.Likelihood{&factor.LinGaussian{X: []float64{0.3, 0.1}, Y: 0.2, Sigma: 0.7}}}
	if got := m.Support.Outside(task); !strings.HasPrefix(got, SupportUnknown) {
		t.Errorf("Outside without ranges = %q, want %q…", got, SupportUnknown)
	}
	before, _ := Hash(dir)
	s := m.Support
	if s.Ranges, err = factor.TrainingRanges(s.SimOptions()); err != nil {
		t.Fatal(err)
	}
	if err := WriteSupport(dir, s); err != nil {
		t.Fatal(err)
	}
	m2, _, err := ReadInference(dir)
	if err != nil {
		t.Fatalf("weights no longer verify after WriteSupport: %v", err)
	}
	if m2.Support.Ranges == nil || m2.WeightsSHA256 != m.WeightsSHA256 || m2.Step != m.Step || m2.Config != m.Config {
		t.Errorf("WriteSupport changed more than the support: %+v", m2)
	}
	if got := m2.Support.Outside(task); got != "" {
		t.Errorf("Outside with ranges = %q, want inside", got)
	}
	if after, _ := Hash(dir); after == before {
		t.Error("the checkpoint hash (config.json included) did not change with its support")
	}
}

// OOD statistics are used only with the weights they were computed for,
// and new weights written over a checkpoint drop stale ones.
func TestOODFileFollowsWeights(t *testing.T) {
	dir := t.TempDir()
	cfg := arch.SmallConfig("gaussian")
	if err := WriteInference(dir, Manifest{Support: FullSupport(1, 8, 1, 64), Weights: "ema"}, randomNet(cfg)); err != nil {
		t.Fatal(err)
	}
	m, _ := ReadManifest(dir)
	if o, err := ReadOOD(dir, m.WeightsSHA256); o != nil || err != nil {
		t.Fatalf("no file: %v, %v", o, err)
	}
	o := &OOD{WeightsSHA256: m.WeightsSHA256, Dim: 2, Mean: []float64{1, 0}, Precision: []float64{4, 0, 0, 1}, Quantile: 0.99, Threshold: 3}
	if err := WriteOOD(dir, o); err != nil {
		t.Fatal(err)
	}
	got, err := ReadOOD(dir, m.WeightsSHA256)
	if err != nil || got == nil {
		t.Fatalf("read back: %v", err)
	}
	if d, _ := got.Distance([]float64{2, 1}); math.Abs(d-math.Sqrt(5)) > 1e-15 {
		t.Errorf("distance %v, want √5", d)
	}
	if _, err := ReadOOD(dir, "other"); !errors.Is(err, ErrOODStale) {
		t.Errorf("other weights: %v", err)
	}
	// New weights: the statistics go.
	net := randomNet(cfg)
	net.Tensors()[0].Data[0] += 1
	if err := WriteInference(dir, Manifest{Support: FullSupport(1, 8, 1, 64), Weights: "ema"}, net); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, OODFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("stale %s left beside new weights (%v)", OODFile, err)
	}
}
