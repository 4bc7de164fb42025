package afin

import (
	"context"

	"github.com/afin-bench/afin/afin/checkpoint"
	"github.com/afin-bench/afin/afin/gomlx"
	"github.com/afin-bench/afin/afin/heldout"
	"github.com/afin-bench/afin/afin/train"
)

// Training lives in package train, held-out evaluation in package
// heldout; these names are the facade cmd/afin and the methods use.

type (
	// Trainer runs AFIN training into a checkpoint directory.
	Trainer = train.Trainer
	// TrainOptions are the settings of a training run.
	TrainOptions = train.TrainOptions
	// LogRecord is one line of a run's training log.
	LogRecord = train.LogRecord
	// ProgramCensus is one program `afin train --census` lists.
	ProgramCensus = gomlx.ProgramCensus
	// ConjugateGrid is a held-out evaluation design.
	ConjugateGrid = heldout.ConjugateGrid
	// ConjugateCell is the held-out evaluation of one (d, N) cell.
	ConjugateCell = heldout.ConjugateCell
)

// File names of a checkpoint directory (see package checkpoint).
const (
	ConfigFile = checkpoint.ConfigFile
	LogFile    = checkpoint.LogFile
)

// Held-out grids (see package heldout).
var (
	SmallGrid = heldout.SmallGrid
	FullGrid  = heldout.FullGrid
)

// DefaultTrainOptions are the paper's settings.
func DefaultTrainOptions() TrainOptions { return train.DefaultTrainOptions() }

// ResolveResume merges the options of a resumed run (see train.ResolveResume).
func ResolveResume(stored, given TrainOptions, override []string) (TrainOptions, error) {
	return train.ResolveResume(stored, given, override)
}

// ConvertLegacy converts an old single-file checkpoint (see train.ConvertLegacy).
func ConvertLegacy(dir, out string) error { return train.ConvertLegacy(dir, out) }

// CheckpointInfo returns the configuration, training options and step
// stored in a checkpoint directory.
func CheckpointInfo(dir string) (Config, TrainOptions, int, error) { return train.CheckpointInfo(dir) }

// EvaluateConjugate runs the held-out check of a checkpoint on conjugate
// tasks (see heldout.EvaluateConjugate).
func EvaluateConjugate(ctx context.Context, m *Model, grid ConjugateGrid, seed uint64, tasksPerCell, proposals int) ([]ConjugateCell, error) {
	return heldout.EvaluateConjugate(ctx, m, grid, seed, tasksPerCell, proposals)
}

// ConjugateSummary is AFIN's and AFIN+SNIS's mean M1 relative to the
// prior mean's (see heldout.ConjugateSummary).
func ConjugateSummary(cells []ConjugateCell) (afin, snis float64) {
	return heldout.ConjugateSummary(cells)
}
