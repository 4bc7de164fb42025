package checkpoint

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"

	"github.com/afin-bench/afin/afin/arch"
	"github.com/afin-bench/afin/afin/safetensors"
	"github.com/afin-bench/afin/internal/atomicfile"
)

// TrainingState is everything training needs, in one file written
// atomically, so a run killed while saving can always resume from the
// last complete state: raw weights, the EMA (also the inference weights,
// duplicated here for that reason), AdamW moments, the data-stream RNG
// state, counters and the run's options (JSON, owned by the trainer).
type TrainingState struct {
	Step    int             `json:"step"`
	Skipped int             `json:"skipped"`
	Seconds float64         `json:"seconds"`
	RNG     []byte          `json:"rng"` // marshalled PCG state
	Options json.RawMessage `json:"options"`
	Params  [][]float32     `json:"-"` // raw weights, in arch Tensors order
	EMA     [][]float32     `json:"-"` // exponential moving average of the weights
	M, V    [][]float32     `json:"-"` // AdamW first and second moments
}

// Prefixes of the training-state tensors.
const (
	rawPrefix = "raw/"
	emaPrefix = "ema/"
	mPrefix   = "adam_m/"
	vPrefix   = "adam_v/"
)

var statePrefixes = []string{rawPrefix, emaPrefix, mPrefix, vPrefix}

// WriteTrainingState writes s into dir's training_state.safetensors
// (one file: inference never reads it, so it is not sharded).
func WriteTrainingState(dir string, net *arch.Network, s *TrainingState) error {
	meta, err := json.Marshal(s)
	if err != nil {
		return err
	}
	var ts []safetensors.Tensor
	for k, arrays := range [][][]float32{s.Params, s.EMA, s.M, s.V} {
		prefix := statePrefixes[k]
		if len(arrays) != len(net.Tensors()) {
			return fmt.Errorf("checkpoint: training state has %d %s arrays for %d tensors", len(arrays), prefix, len(net.Tensors()))
		}
		for i, t := range net.Tensors() {
			ts = append(ts, safetensors.Tensor{Name: prefix + t.Name, Shape: t.Shape, Data: arrays[i]})
		}
	}
	return atomicfile.Write(filepath.Join(dir, StateFile), func(w io.Writer) error {
		return safetensors.Encode(w, ts, map[string]string{"afin_training_state": string(meta)})
	})
}

// ReadTrainingState reads dir's training state for the network net
// declares.
func ReadTrainingState(dir string, net *arch.Network) (*TrainingState, error) {
	path := filepath.Join(dir, StateFile)
	f, err := safetensors.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: training state: %w", err)
	}
	var s TrainingState
	if err := json.Unmarshal([]byte(f.Metadata["afin_training_state"]), &s); err != nil {
		return nil, fmt.Errorf("checkpoint: %s: metadata: %w", path, err)
	}
	for k, dst := range []*[][]float32{&s.Params, &s.EMA, &s.M, &s.V} {
		prefix := statePrefixes[k]
		decl := arch.MustNew(net.Cfg)
		if err := fill(decl, f.Tensors, prefix); err != nil {
			return nil, fmt.Errorf("checkpoint: %s: %w", path, err)
		}
		*dst = decl.Data()
	}
	if want := len(statePrefixes) * len(net.Tensors()); len(f.Tensors) != want {
		return nil, fmt.Errorf("checkpoint: %s holds %d tensors, want %d", path, len(f.Tensors), want)
	}
	return &s, nil
}
