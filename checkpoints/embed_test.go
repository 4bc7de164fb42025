package checkpoints_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/afin-bench/afin/afin"
	"github.com/afin-bench/afin/checkpoints"
)

// The embedded checkpoint is the default one, holds its inference files
// and training log but not its training state, and extracts to a
// directory afin.Load accepts.
func TestEmbeddedCheckpointExtractsAndLoads(t *testing.T) {
	if checkpoints.Name != afin.DefaultCheckpointName {
		t.Fatalf("embedded %q, default checkpoint %q: update the //go:embed line", checkpoints.Name, afin.DefaultCheckpointName)
	}
	cache := t.TempDir()
	dir, err := checkpoints.Extract(cache)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "training_state.safetensors")); err == nil {
		t.Error("training_state.safetensors embedded: inference never reads it")
	}
	// The training log, byte for byte: the report's training compute and
	// auto's break-even read its last line.
	got, err := os.ReadFile(filepath.Join(dir, "train.jsonl"))
	if err != nil {
		t.Fatalf("train.jsonl not embedded: %v", err)
	}
	want, err := os.ReadFile(filepath.Join("..", "checkpoints", afin.DefaultCheckpointName, "train.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("embedded train.jsonl (%d bytes) differs from the shipped one (%d bytes): rebuild", len(got), len(want))
	}
	again, err := checkpoints.Extract(cache)
	if err != nil || again != dir {
		t.Fatalf("second Extract: %q, %v; want %q", again, err, dir)
	}
	m, err := afin.Load(dir, afin.EngineChoice{})
	if err != nil {
		t.Fatalf("extracted checkpoint does not load: %v", err)
	}
	shipped, err := afin.Load(filepath.Join("..", "checkpoints", afin.DefaultCheckpointName), afin.EngineChoice{})
	if err != nil {
		t.Fatal(err)
	}
	if m.Hash != shipped.Hash {
		t.Errorf("embedded checkpoint %s differs from the shipped one %s: rebuild", m.Hash, shipped.Hash)
	}
	if m.OOD == nil || m.Support.Ranges == nil {
		t.Errorf("the embedded checkpoint lacks its support: ranges %v, OOD statistics %v (%s)", m.Support.Ranges != nil, m.OOD != nil, m.OODNote)
	}
}

// Outside the repository the default checkpoint
// is the embedded one (bench used to skip AFIN there silently).
func TestDefaultCheckpointOutsideTheRepository(t *testing.T) {
	cache := t.TempDir()
	t.Chdir(t.TempDir())
	dir, err := afin.DefaultCheckpointDir(cache)
	if err != nil {
		t.Fatal(err)
	}
	if rel, err := filepath.Rel(cache, dir); err != nil || rel == dir || rel[0] == '.' {
		t.Fatalf("default checkpoint %s is not the extracted copy under %s", dir, cache)
	}
	if _, err := afin.Load(dir, afin.EngineChoice{}); err != nil {
		t.Fatal(err)
	}
}
