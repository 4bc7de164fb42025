// Package checkpoints carries the shipped AFIN checkpoint inside the
// binary, so `afin infer --method afin` and `afin bench` find it wherever
// the binary runs (a cluster node, a container, outside the repository).
//
// The inference files are embedded (config.json and the model weights:
// model.safetensors, or its shards and index), with the OOD statistics
// (ood.json) that tell when a task is unlike the training ones, and the
// training log train.jsonl, whose last line is the training compute the
// report states and the auto method's break-even divides by: without it a
// run outside the repository would say "not recorded". The training state
// (optimiser moments, several times the weights) stays in the repository.
// Extract writes the files once into a cache directory keyed by their hash.
package checkpoints

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"sync"

	"github.com/afin-bench/afin/internal/atomicfile"
)

// Name is the embedded checkpoint's directory name; it must equal
// afin.DefaultCheckpointName (a test checks).
const Name = "small-full"

// The patterns take whatever inference files the directory holds:
// model.safetensors, or model-0000k-of-0000N.safetensors shards with
// model.safetensors.index.json, and the training log;
// training_state.safetensors does not match.
//
//go:embed small-full/config.json small-full/model* small-full/ood.json small-full/train.jsonl
var files embed.FS

var (
	hashOnce sync.Once
	hashHex  string
)

// Hash is the SHA-256 of the embedded files' names and contents: the
// name of their cache directory.
func Hash() string {
	hashOnce.Do(func() {
		h := sha256.New()
		for _, name := range names() {
			data, _ := files.ReadFile(path.Join(Name, name))
			fmt.Fprintf(h, "%s\x00%d\x00", name, len(data))
			h.Write(data)
		}
		hashHex = hex.EncodeToString(h.Sum(nil))
	})
	return hashHex
}

// names lists the embedded files, sorted.
func names() []string {
	entries, _ := fs.ReadDir(files, Name)
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	sort.Strings(out)
	return out
}

// CacheRoot is where Extract writes: cacheDir/checkpoints when cacheDir
// is set (the CLI passes $AFIN_CACHE_DIR), else the user cache
// directory's afin/checkpoints.
func CacheRoot(cacheDir string) (string, error) {
	if cacheDir != "" {
		return filepath.Join(cacheDir, "checkpoints"), nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache directory for the embedded checkpoint (set AFIN_CACHE_DIR): %w", err)
	}
	return filepath.Join(d, "afin", "checkpoints"), nil
}

// Extract returns a directory holding the embedded checkpoint, writing it
// on first use under CacheRoot(cacheDir). The directory appears whole or
// not at all (written beside it, then renamed), so concurrent processes
// are safe.
func Extract(cacheDir string) (string, error) {
	root, err := CacheRoot(cacheDir)
	if err != nil {
		return "", err
	}
	dir := filepath.Join(root, Name+"-"+Hash()[:16])
	if _, err := os.Stat(filepath.Join(dir, "config.json")); err == nil {
		return dir, nil
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", fmt.Errorf("extracting the embedded checkpoint: %w", err)
	}
	err = atomicfile.WriteDir(dir, func(tmp string) error {
		for _, name := range names() {
			data, err := files.ReadFile(path.Join(Name, name))
			if err != nil {
				return fmt.Errorf("embedded checkpoint: %w", err)
			}
			if err := os.WriteFile(filepath.Join(tmp, name), data, 0o644); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		// Another process got there first: its copy is the same files.
		if _, statErr := os.Stat(filepath.Join(dir, "config.json")); statErr == nil {
			return dir, nil
		}
		return "", fmt.Errorf("extracting the embedded checkpoint: %w", err)
	}
	return dir, nil
}
