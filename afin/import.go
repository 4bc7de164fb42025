package afin

import (
	"fmt"

	"github.com/afin-bench/afin/afin/checkpoint"
	"github.com/afin-bench/afin/afin/torchimport"
)

// ImportRun imports the authors' PyTorch run directory runDir
// (config.json + final.pt) as a portable checkpoint at out, which must
// not exist; nothing is left at out on failure. It returns the notes the
// user should see (EMA fallback, dropped unused decoder).
func ImportRun(runDir, out string) ([]string, error) {
	run, err := torchimport.ReadRun(runDir)
	if err != nil {
		return nil, err
	}
	m := checkpoint.Manifest{Support: run.Support, Step: run.Step, Weights: run.Weights,
		Source: fmt.Sprintf("imported from the authors' PyTorch run %s (final.pt, %s weights)", runDir, run.Weights),
		Notes:  run.Notes}
	err = writeNewDir(out, func(tmp string) error { return checkpoint.WriteInference(tmp, m, run.Net) })
	if err != nil {
		return nil, fmt.Errorf("afin: writing %s: %w", out, err)
	}
	return run.Notes, nil
}
