package checkpoint

import (
	"errors"
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
	prior := func(d int) factor.Prior {
		return &factor.DiagGaussian{Loc: make([]float64, d), Scale: slices.Repeat([]float64{1}, d)}
	}
	lin := func(d int) factor.Likelihood { return &factor.LinGaussian{X: make([]float64, d), Sigma: 1} }
	tests := []struct {
		task *factor.Task
		want string
	}{
		{&factor.Task{D: 4, Prior: prior(4), Factors: []factor.Likelihood{lin(4)}}, ""},
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
