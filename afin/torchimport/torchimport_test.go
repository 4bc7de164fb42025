package torchimport

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/afin-bench/afin/afin/arch"
	"github.com/afin-bench/afin/afin/torchimport/torchtest"
)

// baseArgs are trainer arguments of a small run (the fixture's widths).
func baseArgs(decoder string) map[string]any {
	return map[string]any{
		"posterior_family": decoder, "feat_dim": 12.0, "adapter_hidden_dim": 16.0, "adapter_num_layers": 2.0,
		"box_depth": 2.0, "box_hidden_dim": 24.0, "box_num_layers": 3.0, "merge_num_layers": 2.0,
		"merge_model_dim": 24.0, "hidden_dim": 24.0, "decoder_hidden_dim": 20.0, "decoder_num_layers": 3.0,
		"decoder_residual_scale": 0.1, "flow_context_dim": 20.0, "flow_hidden_dim": 16.0, "flow_num_layers": 2.0,
		"flow_num_steps": 4.0, "flow_max_log_scale": 1.2, "flow_max_strength": 1.0,
		"d_min": 1.0, "d_max": 16.0, "n_min": 1.0, "n_max": 256.0,
	}
}

// randomRun declares the network of cfg with random weights and returns
// it with its state dict in PyTorch's layout.
func randomRun(cfg arch.Config, seed uint64) (*arch.Network, []torchtest.Tensor) {
	net := arch.MustNew(cfg)
	rng := rand.New(rand.NewPCG(seed, 1))
	var sd []torchtest.Tensor
	for _, k := range Keys(net) {
		t := k.Tensor
		t.Data = make([]float32, t.Size())
		for i := range t.Data {
			t.Data[i] = float32(rng.NormFloat64())
		}
		tt := torchtest.Tensor{Name: k.Torch, Shape: t.Shape, Data: t.Data}
		if k.Transpose { // afin (in, out) → PyTorch (out, in)
			in, out := t.Shape[0], t.Shape[1]
			tt.Shape = []int{out, in}
			tt.Data = make([]float32, len(t.Data))
			for i := range in {
				for o := range out {
					tt.Data[o*in+i] = t.Data[i*out+o]
				}
			}
		}
		sd = append(sd, tt)
	}
	return net, sd
}

func writeRun(t *testing.T, args map[string]any, dicts map[string][]torchtest.Tensor) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "run")
	if err := torchtest.WriteRun(dir, args, 100, dicts); err != nil {
		t.Fatal(err)
	}
	return dir
}

// Runs of other sizes import with the widths, depths and head count their
// config gives, and every tensor lands where it belongs (transposed back).
func TestImportOtherSizes(t *testing.T) {
	tests := []struct {
		name      string
		decoder   string
		edit      map[string]any
		wantHeads int
	}{
		{"fixture widths", "gaussian", nil, 4},
		{"8 heads, deeper", "gaussian", map[string]any{"feat_dim": 16.0, "merge_model_dim": 32.0, "box_depth": 3.0, "merge_num_layers": 1.0, "box_num_layers": 2.0}, 8},
		{"2 heads, flow", "flow", map[string]any{"feat_dim": 6.0, "merge_model_dim": 20.0, "flow_num_steps": 3.0, "flow_num_layers": 3.0, "adapter_num_layers": 3.0}, 2},
		{"1 head, unset widths", "flow", map[string]any{"feat_dim": 5.0, "merge_model_dim": 7.0, "decoder_hidden_dim": nil, "flow_context_dim": nil, "hidden_dim": 9.0}, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := baseArgs(tc.decoder)
			for k, v := range tc.edit {
				args[k] = v
			}
			cfg, err := configFromArgs(args)
			if err != nil {
				t.Fatal(err)
			}
			want, sd := randomRun(cfg, 7)
			run, err := ReadRun(writeRun(t, args, map[string][]torchtest.Tensor{"ema_model_state_dict": sd}))
			if err != nil {
				t.Fatal(err)
			}
			c := run.Net.Cfg
			if c.Heads != tc.wantHeads || c.C != int(args["feat_dim"].(float64)) || c.EncLayers != int(args["box_depth"].(float64)) ||
				c.MergeL != max(2, int(args["box_num_layers"].(float64))) {
				t.Errorf("config %+v", c)
			}
			if tc.decoder == "flow" && (len(run.Net.Flow.Couplings) != int(args["flow_num_steps"].(float64)) || len(run.Net.Flow.Affine.Layers) != int(args["flow_num_layers"].(float64))) {
				t.Errorf("flow declared with %d couplings, affine of %d layers", len(run.Net.Flow.Couplings), len(run.Net.Flow.Affine.Layers))
			}
			for i, tn := range run.Net.Tensors() {
				if !slices.Equal(tn.Data, want.Tensors()[i].Data) {
					t.Fatalf("tensor %s imported wrongly", tn.Name)
				}
			}
			if run.Weights != "ema" {
				t.Errorf("weights %s, want ema", run.Weights)
			}
		})
	}
}

func TestImportFallsBackToRawWeights(t *testing.T) {
	args := baseArgs("gaussian")
	cfg, _ := configFromArgs(args)
	_, sd := randomRun(cfg, 3)
	run, err := ReadRun(writeRun(t, args, map[string][]torchtest.Tensor{"model_state_dict": sd}))
	if err != nil {
		t.Fatal(err)
	}
	if run.Weights != "raw" || len(run.Notes) == 0 || !strings.Contains(run.Notes[0], "raw") {
		t.Errorf("weights %s, notes %v: want raw with a message", run.Weights, run.Notes)
	}
}

func TestImportErrors(t *testing.T) {
	args := baseArgs("gaussian")
	cfg, _ := configFromArgs(args)
	_, sd := randomRun(cfg, 5)
	good := writeRun(t, args, map[string][]torchtest.Tensor{"ema_model_state_dict": sd})
	pt, err := os.ReadFile(filepath.Join(good, "final.pt"))
	if err != nil {
		t.Fatal(err)
	}
	variant := func(edit func(dir string)) string {
		dir := filepath.Join(t.TempDir(), "run")
		os.MkdirAll(dir, 0o755)
		cfgData, _ := os.ReadFile(filepath.Join(good, "config.json"))
		os.WriteFile(filepath.Join(dir, "config.json"), cfgData, 0o644)
		os.WriteFile(filepath.Join(dir, "final.pt"), pt, 0o644)
		edit(dir)
		return dir
	}
	other := baseArgs("gaussian")
	other["feat_dim"] = 10.0
	tests := []struct {
		name, file, want string
		dir              string
	}{
		{"no config", "config.json", "cannot read", variant(func(d string) { os.Remove(filepath.Join(d, "config.json")) })},
		{"bad config", "config.json", "not an AFIN run config", variant(func(d string) { os.WriteFile(filepath.Join(d, "config.json"), []byte("[1]"), 0o644) })},
		{"truncated", "final.pt", "truncated or corrupt", variant(func(d string) { os.WriteFile(filepath.Join(d, "final.pt"), pt[:len(pt)/2], 0o644) })},
		{"not a zip", "final.pt", "not a PyTorch checkpoint", variant(func(d string) { os.WriteFile(filepath.Join(d, "final.pt"), []byte("hello"), 0o644) })},
		{"another model", "final.pt", "has shape", writeRun(t, other, map[string][]torchtest.Tensor{"ema_model_state_dict": sd})},
		{"missing tensor", "final.pt", "decoder.mean_head.mlp.4.bias", writeRun(t, args, map[string][]torchtest.Tensor{"ema_model_state_dict": withoutTensor(sd, "decoder.mean_head.mlp.4.bias")})},
		{"extra tensor", "final.pt", "no counterpart", writeRun(t, args, map[string][]torchtest.Tensor{"ema_model_state_dict": append(slices.Clone(sd), torchtest.Tensor{Name: "head.extra", Shape: []int{1}, Data: []float32{1}})})},
		{"no state dict", "final.pt", "no model_state_dict", writeRun(t, args, map[string][]torchtest.Tensor{})},
	}
	for _, tc := range tests {
		_, err := ReadRun(tc.dir)
		if err == nil {
			t.Errorf("%s: no error", tc.name)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, filepath.Join(tc.dir, tc.file)) || !strings.Contains(msg, tc.want) || strings.Contains(msg, "\n") {
			t.Errorf("%s: error %q, want one line naming %s and containing %q", tc.name, msg, tc.file, tc.want)
		}
	}
}

func withoutTensor(sd []torchtest.Tensor, name string) []torchtest.Tensor {
	var out []torchtest.Tensor
	for _, t := range sd {
		if t.Name != name {
			out = append(out, t)
		}
	}
	return out
}
