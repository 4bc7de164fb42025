package afin

import (
	"encoding/gob"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// CheckpointFile is the name of the training state inside a checkpoint
// directory; ConfigFile is a human-readable copy of its configuration.
const (
	CheckpointFile = "checkpoint.gob"
	ConfigFile     = "config.json"
	LogFile        = "train.jsonl"
)

// state is everything a training run needs to continue: weights, EMA,
// AdamW moments, step, data-stream RNG state and the run's settings.
type state struct {
	Config  Config
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

// writeAtomic writes data through a temporary file and a rename, so a
// reader (or a killed run) never sees a torn file.
func writeAtomic(path string, write func(f *os.File) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	// CreateTemp makes the file private; checkpoints are meant to be shared.
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := write(tmp); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}

func saveState(dir string, s *state) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("afin: checkpoint dir: %w", err)
	}
	cfgJSON, err := json.MarshalIndent(struct {
		Config  Config       `json:"config"`
		Options TrainOptions `json:"train_options"`
		Step    int          `json:"step"`
	}{s.Config, s.Options, s.Step}, "", "  ")
	if err != nil {
		return err
	}
	if err := writeAtomic(filepath.Join(dir, ConfigFile), func(f *os.File) error {
		_, err := f.Write(append(cfgJSON, '\n'))
		return err
	}); err != nil {
		return fmt.Errorf("afin: writing config: %w", err)
	}
	if err := writeAtomic(filepath.Join(dir, CheckpointFile), func(f *os.File) error {
		return gob.NewEncoder(f).Encode(s)
	}); err != nil {
		return fmt.Errorf("afin: writing checkpoint: %w", err)
	}
	return nil
}

func loadState(dir string) (*state, error) {
	f, err := os.Open(filepath.Join(dir, CheckpointFile))
	if err != nil {
		return nil, fmt.Errorf("afin: opening checkpoint: %w", err)
	}
	defer f.Close()
	var s state
	if err := gob.NewDecoder(f).Decode(&s); err != nil {
		return nil, fmt.Errorf("afin: reading checkpoint %s: %w", f.Name(), err)
	}
	if err := s.Config.Validate(); err != nil {
		return nil, fmt.Errorf("afin: checkpoint %s: %w", f.Name(), err)
	}
	// The stored names and shapes must be exactly those of the config.
	want := NewParamsShapes(s.Config)
	if len(want) != len(s.Params) || len(s.Names) != len(want) {
		return nil, fmt.Errorf("afin: checkpoint %s has %d parameters, config %s needs %d", f.Name(), len(s.Params), s.Config.Name, len(want))
	}
	for i, p := range want {
		if s.Names[i] != p.Name || len(s.Params[i]) != p.Size() || len(s.EMA[i]) != p.Size() {
			return nil, fmt.Errorf("afin: checkpoint %s: parameter %d is %s, want %s %v", f.Name(), i, s.Names[i], p.Name, p.Shape)
		}
	}
	return &s, nil
}

// CheckpointInfo returns the configuration, training options and step
// stored in a checkpoint directory.
func CheckpointInfo(dir string) (Config, TrainOptions, int, error) {
	s, err := loadState(dir)
	if err != nil {
		return Config{}, TrainOptions{}, 0, err
	}
	return s.Config, s.Options, s.Step, nil
}
