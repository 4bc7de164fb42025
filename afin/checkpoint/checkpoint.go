// Package checkpoint is afin's portable checkpoint format. A checkpoint
// is a directory:
//
//	config.json                    architecture (arch.Config), training support, step, provenance
//	model.safetensors              inference weights (EMA), float32, arch tensor names;
//	  or model-0000k-of-0000N.safetensors + model.safetensors.index.json  when over 16 MiB
//	ood.json                       OOD statistics of the pooled summary for these weights (optional; see OOD)
//	training_state.safetensors     raw weights, EMA, AdamW moments, RNG state, step, options (training only)
//	train.jsonl                    training log (optional)
//
// Inference reads only config.json and the weights; their content hash
// (Hash) is the checkpoint's identity in provenance. The package imports
// no GoMLX, so any implementation of the network can read checkpoints.
package checkpoint

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/afin-bench/afin/afin/arch"
	"github.com/afin-bench/afin/afin/safetensors"
	"github.com/afin-bench/afin/factor"
	"github.com/afin-bench/afin/internal/atomicfile"
)

// File names inside a checkpoint directory.
const (
	ConfigFile = "config.json"
	StateFile  = "training_state.safetensors"
	LogFile    = "train.jsonl"
	// LegacyFile is the single-file gob format written before the
	// portable one; it is converted, never read for inference.
	LegacyFile = "checkpoint.gob"
)

// Format names this layout in config.json.
const Format = "afin-checkpoint/1"

// MaxShardBytes is the largest weights file written; larger weight sets
// are sharded with an index.
const MaxShardBytes = 16 << 20

// ErrLegacy reports a checkpoint in the old single-file format.
var ErrLegacy = errors.New("checkpoint is in the old format")

// Support is the training support of a checkpoint: the task sizes and
// families it was trained on and, in Ranges, the range of every quantity
// the network reads as the simulator drew them. Results outside it are
// extrapolation. Checkpoints written before Ranges existed have none.
type Support struct {
	DMin        int            `json:"d_min"`
	DMax        int            `json:"d_max"`
	NMin        int            `json:"n_min"`
	NMax        int            `json:"n_max"`
	Priors      []string       `json:"priors"`
	Likelihoods []string       `json:"likelihoods"`
	Designs     []string       `json:"designs"`
	Ranges      *factor.Ranges `json:"ranges,omitempty"`
}

// SupportUnknown is Outside's answer for a checkpoint that records no
// ranges: whether a task is inside cannot be told.
const SupportUnknown = "support unknown"

// SimOptions is the simulator configuration of the support's sizes and
// families: what `afin train` draws its tasks with.
func (s Support) SimOptions() factor.SimOptions {
	o := factor.SimOptions{DMin: s.DMin, DMax: s.DMax, NMin: s.NMin, NMax: s.NMax}
	if len(s.Priors) == 1 {
		o.Prior = s.Priors[0]
	}
	if len(s.Likelihoods) < len(factor.LikelihoodFamilies) {
		o.Likelihoods = slices.Clone(s.Likelihoods)
	}
	return o
}

// FullSupport is the given size ranges with every family and design.
func FullSupport(dMin, dMax, nMin, nMax int) Support {
	return Support{DMin: dMin, DMax: dMax, NMin: nMin, NMax: nMax,
		Priors:      slices.Clone(factor.PriorFamilies),
		Likelihoods: slices.Clone(factor.LikelihoodFamilies),
		Designs:     slices.Clone(factor.DesignFamilies)}
}

// Outside returns why a task is outside the support ("" when inside):
// its size or a family not trained on, else every quantity outside
// Ranges (named with the task's value and the trained range), or
// SupportUnknown with the reason when the support records no ranges.
// Designs are not checked by name: a task does not record its design;
// Ranges bound its covariates instead.
func (s Support) Outside(t *factor.Task) string {
	if why := s.OutsideFamilies(t); why != "" {
		return why
	}
	if s.Ranges == nil {
		return SupportUnknown + ": the checkpoint records no training ranges (add them with `afin checkpoint support --write DIR`)"
	}
	return s.Ranges.Check(t)
}

// OutsideFamilies is Outside without the ranges: the task's size and
// families only ("" when inside).
func (s Support) OutsideFamilies(t *factor.Task) string {
	if t.D < s.DMin || t.D > s.DMax {
		return fmt.Sprintf("d=%d outside the training range [%d, %d]", t.D, s.DMin, s.DMax)
	}
	if n := t.N(); n < s.NMin || n > s.NMax {
		return fmt.Sprintf("N=%d outside the training range [%d, %d]", n, s.NMin, s.NMax)
	}
	if t.Prior != nil && !slices.Contains(s.Priors, t.Prior.Family()) {
		return fmt.Sprintf("prior %s was not trained on", t.Prior.Family())
	}
	for _, f := range t.Factors {
		if !slices.Contains(s.Likelihoods, f.Family()) {
			return fmt.Sprintf("likelihood %s was not trained on", f.Family())
		}
	}
	return ""
}

// Manifest is config.json.
type Manifest struct {
	Format  string      `json:"format"`
	Config  arch.Config `json:"config"`
	Params  int         `json:"trainable_params"`
	Support Support     `json:"training_support"`
	Step    int         `json:"step"`
	Weights string      `json:"weights"` // which weights the inference files hold: "ema" or "raw"
	// WeightsSHA256 is the digest of the weight files (see hashFiles), so
	// config.json alone identifies the whole checkpoint; checked on load.
	WeightsSHA256 string   `json:"weights_sha256"`
	Source        string   `json:"source"` // provenance: how the checkpoint was made
	Notes         []string `json:"notes,omitempty"`
}

// WriteInference writes config.json and the weights of net (every tensor
// must have data) into dir, each file atomically.
func WriteInference(dir string, m Manifest, net *arch.Network) error {
	m.Format = Format
	m.Config = net.Cfg
	m.Params, _ = net.Count()
	var ts []safetensors.Tensor
	for _, t := range net.Tensors() {
		if len(t.Data) != t.Size() {
			return fmt.Errorf("checkpoint: tensor %s has %d values, want %d", t.Name, len(t.Data), t.Size())
		}
		ts = append(ts, safetensors.Tensor{Name: t.Name, Shape: t.Shape, Data: t.Data})
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	written, err := safetensors.WriteCollection(atomicIn(dir), ts, map[string]string{"format": "afin", "step": fmt.Sprint(m.Step)}, MaxShardBytes)
	if err != nil {
		return fmt.Errorf("checkpoint: writing weights to %s: %w", dir, err)
	}
	// A previous weight set of another layout (sharded or not) would be
	// found first by readers: remove whatever this write did not produce.
	old, _ := filepath.Glob(filepath.Join(dir, "model*.safetensors*"))
	for _, f := range old {
		if !slices.Contains(written, filepath.Base(f)) {
			os.Remove(f)
		}
	}
	files, err := safetensors.CollectionFiles(dir)
	if err != nil {
		return err
	}
	if m.WeightsSHA256, err = hashFiles(dir, files); err != nil {
		return err
	}
	// OOD statistics of the weights replaced are of no use any more.
	if _, err := ReadOOD(dir, m.WeightsSHA256); errors.Is(err, ErrOODStale) {
		os.Remove(filepath.Join(dir, OODFile))
	}
	return writeJSON(filepath.Join(dir, ConfigFile), m, "  ")
}

// writeJSON writes v as indented JSON with a final newline to path,
// atomically: a reader sees the old file or the new one, never half.
func writeJSON(path string, v any, indent string) error {
	js, err := json.MarshalIndent(v, "", indent)
	if err != nil {
		return fmt.Errorf("checkpoint: encoding %s: %w", filepath.Base(path), err)
	}
	return atomicfile.Write(path, func(w io.Writer) error {
		_, err := w.Write(append(js, '\n'))
		return err
	})
}

func atomicIn(dir string) safetensors.WriteFunc {
	return func(name string, write func(io.Writer) error) error {
		return atomicfile.Write(filepath.Join(dir, name), write)
	}
}

// ErrInvalid marks a directory that cannot be read as a checkpoint: no
// or a malformed config.json, weight files missing, truncated, or not
// matching its digest. Such an error is the user's input being wrong,
// not a failure of the work. ReadManifest's and ReadInference's errors
// carry it; their text is unchanged and names the directory or file.
var ErrInvalid = errors.New("invalid checkpoint")

// invalidError gives err the ErrInvalid mark without changing its text.
type invalidError struct{ err error }

func (e *invalidError) Error() string        { return e.err.Error() }
func (e *invalidError) Unwrap() error        { return e.err }
func (e *invalidError) Is(target error) bool { return target == ErrInvalid }

func invalid(err error) error {
	if err == nil {
		return nil
	}
	return &invalidError{err}
}

// ReadManifest reads config.json, refusing the legacy format. Its errors
// are ErrInvalid.
func ReadManifest(dir string) (Manifest, error) {
	m, err := readManifest(dir)
	return m, invalid(err)
}

func readManifest(dir string) (Manifest, error) {
	var m Manifest
	data, err := os.ReadFile(filepath.Join(dir, ConfigFile))
	if err == nil {
		err = json.Unmarshal(data, &m)
		if err == nil && m.Format != Format {
			err = fmt.Errorf("format %q, want %q", m.Format, Format)
		}
	}
	if err != nil {
		if _, lerr := os.Stat(filepath.Join(dir, LegacyFile)); lerr == nil {
			return m, fmt.Errorf("%s: %w (%s); convert it with `afin checkpoint convert %s --out NEW_DIR`", dir, ErrLegacy, LegacyFile, dir)
		}
		return m, fmt.Errorf("checkpoint %s: %w", dir, err)
	}
	if err := m.Config.Validate(); err != nil {
		return m, fmt.Errorf("checkpoint %s: %w", dir, err)
	}
	return m, nil
}

// ReadInference reads the manifest and the weights of dir into a fresh
// declaration of its configuration. Every declared tensor must be present
// with its shape, and no other tensor may be. Its errors are ErrInvalid.
func ReadInference(dir string) (Manifest, *arch.Network, error) {
	m, net, err := readInference(dir)
	return m, net, invalid(err)
}

func readInference(dir string) (Manifest, *arch.Network, error) {
	m, err := readManifest(dir)
	if err != nil {
		return m, nil, err
	}
	net, err := arch.New(m.Config)
	if err != nil {
		return m, nil, err
	}
	ts, _, err := safetensors.ReadCollection(dir)
	if err != nil {
		return m, nil, fmt.Errorf("checkpoint %s: %w", dir, err)
	}
	if err := fill(net, ts, ""); err != nil {
		return m, nil, fmt.Errorf("checkpoint %s: %w", dir, err)
	}
	files, err := safetensors.CollectionFiles(dir)
	if err != nil {
		return m, nil, err
	}
	if h, err := hashFiles(dir, files); err != nil || h != m.WeightsSHA256 {
		return m, nil, fmt.Errorf("checkpoint %s: weight files do not match the digest in %s (modified or mixed checkpoints?)", dir, ConfigFile)
	}
	return m, net, nil
}

// fill copies the tensors named prefix+name into net, checking shapes
// and that nothing is left over on either side.
func fill(net *arch.Network, ts map[string]safetensors.Tensor, prefix string) error {
	used := 0
	for _, t := range net.Tensors() {
		s, ok := ts[prefix+t.Name]
		if !ok {
			return fmt.Errorf("tensor %s%s is missing", prefix, t.Name)
		}
		if !slices.Equal(s.Shape, t.Shape) {
			return fmt.Errorf("tensor %s%s has shape %v, want %v", prefix, t.Name, s.Shape, t.Shape)
		}
		t.Data = s.Data
		used++
	}
	n := 0
	for name := range ts {
		if len(name) >= len(prefix) && name[:len(prefix)] == prefix {
			n++
			if net.ByName(name[len(prefix):]) == nil {
				return fmt.Errorf("tensor %s is not part of the %s network", name, net.Cfg.Name)
			}
		}
	}
	if n != used {
		return fmt.Errorf("%d tensors for %d declared", n, used)
	}
	return nil
}

// InferenceFiles lists the files inference reads, config.json first.
func InferenceFiles(dir string) ([]string, error) {
	files, err := safetensors.CollectionFiles(dir)
	if err != nil {
		return nil, err
	}
	return append([]string{ConfigFile}, files...), nil
}

// Hash is the hex SHA-256 of the inference files of dir: for each file
// of InferenceFiles in order, its name, a NUL byte, its length (8 bytes
// little-endian) and its content. The training state and log are not
// part of it.
func Hash(dir string) (string, error) {
	files, err := InferenceFiles(dir)
	if err != nil {
		return "", err
	}
	return hashFiles(dir, files)
}

// hashFiles digests the named files of dir: name, NUL, 8-byte length and
// content of each, in order.
func hashFiles(dir string, files []string) (string, error) {
	h := sha256.New()
	for _, name := range files {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return "", err
		}
		var n [8]byte
		binary.LittleEndian.PutUint64(n[:], uint64(len(data)))
		h.Write([]byte(name))
		h.Write([]byte{0})
		h.Write(n[:])
		io.Copy(h, bytes.NewReader(data))
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
