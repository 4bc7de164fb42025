package train

import (
	"encoding/gob"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/afin-bench/afin/afin/arch"
	"github.com/afin-bench/afin/afin/checkpoint"
	"github.com/afin-bench/afin/factor"
)

// File names of a checkpoint directory (see package checkpoint for the
// layout).
const (
	// ConfigFile is the architecture, training support and provenance.
	ConfigFile = checkpoint.ConfigFile
	// CheckpointFile is the file whose SHA-256 identified a checkpoint
	// before Model.Hash existed. It is now config.json, which records the
	// digest of the weight files (verified on load), so hashing it still
	// identifies the weights. Deprecated: use Model.Hash.
	CheckpointFile = checkpoint.ConfigFile
	LogFile        = checkpoint.LogFile
)

// state is everything a training run needs to continue: weights, EMA,
// AdamW moments, step, data-stream RNG state and the run's settings.
// The field names are those of the legacy gob format, which decodes
// into it.
type state struct {
	Config  arch.Config
	Options TrainOptions
	Step    int
	Names   []string
	Shapes  [][]int
	Params  [][]float32
	EMA     [][]float32
	M, V    [][]float32
	RNG     []byte // marshalled PCG
	Skipped int
	Seconds float64 // training wall time so far
}

// support is the training support recorded for a run of these options,
// with the ranges of the simulator configuration the run draws from.
func (o TrainOptions) support() (checkpoint.Support, error) {
	or := func(v, def int) int {
		if v == 0 {
			return def
		}
		return v
	}
	s := checkpoint.FullSupport(or(o.DMin, 1), or(o.DMax, 16), or(o.NMin, 1), or(o.NMax, 256))
	r, err := factor.TrainingRanges(s.SimOptions())
	if err != nil {
		return s, fmt.Errorf("afin: %w", err)
	}
	s.Ranges = r
	return s, nil
}

// saveState writes s as a portable checkpoint into dir: the EMA weights
// as the inference files, the rest as the training state.
func saveState(dir string, s *state, source string) error {
	net, err := arch.New(s.Config)
	if err != nil {
		return err
	}
	if err := net.SetData(s.EMA); err != nil {
		return fmt.Errorf("afin: EMA weights: %w", err)
	}
	opts, err := json.Marshal(s.Options)
	if err != nil {
		return err
	}
	ts := &checkpoint.TrainingState{Step: s.Step, Skipped: s.Skipped, Seconds: s.Seconds, RNG: s.RNG,
		Options: opts, Params: s.Params, EMA: s.EMA, M: s.M, V: s.V}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("afin: checkpoint dir: %w", err)
	}
	// The training state is complete in itself (one atomic file), so a run
	// killed between these writes still resumes from its last state.
	if err := checkpoint.WriteTrainingState(dir, net, ts); err != nil {
		return fmt.Errorf("afin: writing training state: %w", err)
	}
	sup, err := s.Options.support()
	if err != nil {
		return err
	}
	m := checkpoint.Manifest{Support: sup, Step: s.Step, Weights: "ema", Source: source}
	if err := checkpoint.WriteInference(dir, m, net); err != nil {
		return fmt.Errorf("afin: writing checkpoint: %w", err)
	}
	return nil
}

// loadState reads a portable checkpoint's training state (config.json
// for the architecture, then training_state.safetensors; the inference
// weights are not needed).
func loadState(dir string) (*state, error) {
	m, err := checkpoint.ReadManifest(dir)
	if err != nil {
		return nil, err
	}
	net, err := arch.New(m.Config)
	if err != nil {
		return nil, err
	}
	ts, err := checkpoint.ReadTrainingState(dir, net)
	if err != nil {
		return nil, fmt.Errorf("afin: %s cannot be resumed: %w", dir, err)
	}
	s := &state{Config: m.Config, Step: ts.Step, Params: ts.Params, EMA: ts.EMA, M: ts.M, V: ts.V,
		RNG: ts.RNG, Skipped: ts.Skipped, Seconds: ts.Seconds}
	if err := json.Unmarshal(ts.Options, &s.Options); err != nil {
		return nil, fmt.Errorf("afin: %s: training options: %w", dir, err)
	}
	for _, t := range net.Tensors() {
		s.Names = append(s.Names, t.Name)
		s.Shapes = append(s.Shapes, t.Shape)
	}
	return s, nil
}

// loadLegacy reads the old single-file gob checkpoint.
func loadLegacy(dir string) (*state, error) {
	f, err := os.Open(filepath.Join(dir, checkpoint.LegacyFile))
	if err != nil {
		return nil, fmt.Errorf("afin: opening legacy checkpoint: %w", err)
	}
	defer f.Close()
	var s state
	if err := gob.NewDecoder(f).Decode(&s); err != nil {
		return nil, fmt.Errorf("afin: reading legacy checkpoint %s: %w", f.Name(), err)
	}
	if err := s.Config.Validate(); err != nil {
		return nil, fmt.Errorf("afin: legacy checkpoint %s: %w", f.Name(), err)
	}
	// The stored names and shapes must be exactly those of the config.
	want := arch.MustNew(s.Config).Tensors()
	if len(want) != len(s.Params) || len(s.Names) != len(want) || len(s.EMA) != len(want) || len(s.M) != len(want) || len(s.V) != len(want) {
		return nil, fmt.Errorf("afin: legacy checkpoint %s has %d parameters, config %s needs %d", f.Name(), len(s.Params), s.Config.Name, len(want))
	}
	for i, p := range want {
		n := p.Size()
		if s.Names[i] != p.Name || len(s.Params[i]) != n || len(s.EMA[i]) != n || len(s.M[i]) != n || len(s.V[i]) != n {
			return nil, fmt.Errorf("afin: legacy checkpoint %s: parameter %d is %s, want %s %v", f.Name(), i, s.Names[i], p.Name, p.Shape)
		}
	}
	return &s, nil
}

// ConvertLegacy converts the old single-file checkpoint in dir (written
// by `afin train` before the portable format) into a portable checkpoint
// at out, which must not exist. Every array is carried over exactly, so
// training resumed from out continues the old run bit for bit. The
// training log is copied.
func ConvertLegacy(dir, out string) error {
	s, err := loadLegacy(dir)
	if err != nil {
		return err
	}
	return checkpoint.WriteNewDir(out, func(tmp string) error {
		if err := saveState(tmp, s, "afin train (converted from "+checkpoint.LegacyFile+")"); err != nil {
			return err
		}
		return checkpoint.CopyFile(filepath.Join(dir, LogFile), filepath.Join(tmp, LogFile))
	})
}

// CheckpointInfo returns the configuration, training options and step
// stored in a checkpoint directory.
func CheckpointInfo(dir string) (arch.Config, TrainOptions, int, error) {
	s, err := loadState(dir)
	if err != nil {
		return arch.Config{}, TrainOptions{}, 0, err
	}
	return s.Config, s.Options, s.Step, nil
}
