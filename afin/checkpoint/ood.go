package checkpoint

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
)

// OODFile holds a checkpoint's out-of-distribution statistics, beside
// config.json. It is derived from the weights (not part of Hash) and
// records the weights' digest, so statistics of other weights are never
// used.
const OODFile = "ood.json"

// OODFormat names the layout of OODFile.
const OODFormat = "afin-ood/1"

// OOD is the out-of-distribution check of the amortized Bayesian
// workflow (Li, Vehtari, Bürkner, Radev, Acerbi, Schmitt 2024): the
// Mahalanobis distance of a task's pooled summary inside the network from
// the summaries of simulated training-distribution tasks, flagged above a
// quantile calibrated on other simulated tasks.
type OOD struct {
	Format        string `json:"format"`
	WeightsSHA256 string `json:"weights_sha256"` // the weights the summaries came from
	Summary       string `json:"summary"`        // which representation
	Dim           int    `json:"dim"`
	// Mean and Precision (dim×dim, row-major: the inverse of the
	// summaries' covariance plus Ridge·I) define the distance.
	Mean      []float64 `json:"mean"`
	Precision []float64 `json:"precision"`
	Ridge     float64   `json:"ridge"`
	// Threshold is the Quantile of the distances of CalibrationTasks
	// simulated tasks; FalseFlagRate the fraction of TestTasks fresh
	// simulated tasks above it.
	Quantile         float64 `json:"quantile"`
	Threshold        float64 `json:"threshold"`
	FitTasks         int     `json:"fit_tasks"`
	CalibrationTasks int     `json:"calibration_tasks"`
	TestTasks        int     `json:"test_tasks"`
	FalseFlagRate    float64 `json:"false_flag_rate"`
	Seed             uint64  `json:"seed"`
	Source           string  `json:"source"`
}

// Distance is the Mahalanobis distance of a summary from the training mean.
func (o *OOD) Distance(v []float64) (float64, error) {
	if len(v) != o.Dim {
		return 0, fmt.Errorf("summary has %d values, want %d", len(v), o.Dim)
	}
	diff := make([]float64, o.Dim)
	for i := range diff {
		diff[i] = v[i] - o.Mean[i]
	}
	var q float64
	for i := range diff {
		var s float64
		for j, x := range diff {
			s += o.Precision[i*o.Dim+j] * x
		}
		q += diff[i] * s
	}
	return math.Sqrt(math.Max(q, 0)), nil
}

func (o *OOD) validate() error {
	switch {
	case o.Format != OODFormat:
		return fmt.Errorf("format %q, want %q", o.Format, OODFormat)
	case o.Dim < 1 || len(o.Mean) != o.Dim || len(o.Precision) != o.Dim*o.Dim:
		return fmt.Errorf("dimension %d with %d means and %d precision entries", o.Dim, len(o.Mean), len(o.Precision))
	case !(o.Threshold > 0) || math.IsInf(o.Threshold, 1):
		return fmt.Errorf("threshold %g is not a finite number > 0", o.Threshold)
	}
	return nil
}

// ErrOODStale reports OOD statistics computed for other weights.
var ErrOODStale = errors.New("out-of-distribution statistics are for other weights")

// ReadOOD reads dir's OOD statistics for the weights with digest
// weightsSHA: nil and no error when there are none, ErrOODStale when they
// belong to other weights.
func ReadOOD(dir, weightsSHA string) (*OOD, error) {
	data, err := os.ReadFile(filepath.Join(dir, OODFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("checkpoint %s: %w", dir, err)
	}
	var o OOD
	if err := json.Unmarshal(data, &o); err != nil {
		return nil, fmt.Errorf("checkpoint %s: %s: %w", dir, OODFile, err)
	}
	if err := o.validate(); err != nil {
		return nil, fmt.Errorf("checkpoint %s: %s: %w", dir, OODFile, err)
	}
	if o.WeightsSHA256 != weightsSHA {
		return nil, fmt.Errorf("checkpoint %s: %s: %w", dir, OODFile, ErrOODStale)
	}
	return &o, nil
}

// WriteOOD writes o into dir atomically.
func WriteOOD(dir string, o *OOD) error {
	o.Format = OODFormat
	if err := o.validate(); err != nil {
		return fmt.Errorf("checkpoint: %s: %w", OODFile, err)
	}
	return writeJSON(filepath.Join(dir, OODFile), o, " ")
}

// WriteSupport replaces the training support recorded in dir's
// config.json, leaving the weights and every other field as they are
// (weights_sha256 covers the weight files only, so loading still
// verifies).
func WriteSupport(dir string, s Support) error {
	m, err := ReadManifest(dir)
	if err != nil {
		return err
	}
	m.Support = s
	return writeJSON(filepath.Join(dir, ConfigFile), m, "  ")
}
