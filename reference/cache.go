package reference

import (
	"encoding/gob"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/afin-bench/afin/internal/atomicfile"
	"github.com/afin-bench/afin/posterior"
)

// cacheFile is the on-disk form of a NUTS reference.
type cacheFile struct {
	Version     int
	Kind        string
	D           int
	Mean, Cov   []float64
	Z           []float64 // subsample, row-major
	Diagnostics Diagnostics
}

func load(path string) (*Reference, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var c cacheFile
	if err := gob.NewDecoder(f).Decode(&c); err != nil {
		return nil, fmt.Errorf("reference: reading cache file %s (delete it to recompute): %w", path, err)
	}
	if c.Version != cacheVersion || c.D < 1 || len(c.Mean) != c.D || len(c.Cov) != c.D*c.D || len(c.Z)%c.D != 0 {
		return nil, fmt.Errorf("reference: cache file %s is malformed or from another version (delete it to recompute)", path)
	}
	return &Reference{Kind: c.Kind, D: c.D, Mean: c.Mean, Cov: c.Cov, Draws: &posterior.Draws{D: c.D, Z: c.Z}, Diagnostics: c.Diagnostics}, nil
}

// save writes ref to path atomically: a reader sees the old state or the
// complete new file, never a torn one, even with concurrent writers.
func save(path string, ref *Reference) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("reference: creating cache directory: %w", err)
	}
	c := cacheFile{Version: cacheVersion, Kind: ref.Kind, D: ref.D, Mean: ref.Mean, Cov: ref.Cov, Z: ref.Draws.Z, Diagnostics: ref.Diagnostics}
	err := atomicfile.Write(path, func(w io.Writer) error { return gob.NewEncoder(w).Encode(&c) })
	if err != nil {
		return fmt.Errorf("reference: writing cache file: %w", err)
	}
	return nil
}
