package afin

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"

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
	// The source names final.pt by content, not by path, so the same run
	// imported anywhere gives the same checkpoint (and hash).
	data, err := os.ReadFile(filepath.Join(runDir, "final.pt"))
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(data)
	m := checkpoint.Manifest{Support: run.Support, Step: run.Step, Weights: run.Weights,
		Source: fmt.Sprintf("imported from the authors' PyTorch run (final.pt sha256 %s, %s weights)", hex.EncodeToString(sum[:]), run.Weights),
		Notes:  run.Notes}
	err = checkpoint.WriteNewDir(out, func(tmp string) error { return checkpoint.WriteInference(tmp, m, run.Net) })
	if err != nil {
		return nil, fmt.Errorf("afin: writing %s: %w", out, err)
	}
	return run.Notes, nil
}
