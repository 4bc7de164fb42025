package train

import (
	"context"
	"encoding/gob"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/afin-bench/afin/afin/arch"
	"github.com/afin-bench/afin/afin/checkpoint"
)

// writeLegacy stores s in the old single-file gob format, as `afin train`
// wrote checkpoints before the portable format.
func writeLegacy(t *testing.T, dir string, s *state) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, checkpoint.LegacyFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := gob.NewEncoder(f).Encode(s); err != nil {
		t.Fatal(err)
	}
}

func sameState(t *testing.T, a, b *state) {
	t.Helper()
	if a.Step != b.Step || a.Skipped != b.Skipped || !slices.Equal(a.RNG, b.RNG) {
		t.Fatalf("steps %d/%d, skipped %d/%d, RNG equal %v", a.Step, b.Step, a.Skipped, b.Skipped, slices.Equal(a.RNG, b.RNG))
	}
	for i := range a.Params {
		if !slices.Equal(a.Params[i], b.Params[i]) || !slices.Equal(a.EMA[i], b.EMA[i]) ||
			!slices.Equal(a.M[i], b.M[i]) || !slices.Equal(a.V[i], b.V[i]) {
			t.Fatalf("parameter %s differs", a.Names[i])
		}
	}
}

// Training k steps from a converted old-format checkpoint equals training
// k steps from the old checkpoint itself, bit for bit.
func TestConvertedCheckpointResumesBitForBit(t *testing.T) {
	cfg := tinyConfig()
	ctx := context.Background()
	first := t.TempDir()
	if err := (&Trainer{Dir: first}).Train(ctx, cfg, tinyTrainOptions(2), false); err != nil {
		t.Fatal(err)
	}
	s, err := loadState(first)
	if err != nil {
		t.Fatal(err)
	}
	legacy := filepath.Join(t.TempDir(), "old")
	writeLegacy(t, legacy, s)

	// The old checkpoint, continued for 2 more steps.
	old, err := loadLegacy(legacy)
	if err != nil {
		t.Fatal(err)
	}
	old.Options.Steps = 4
	dirA := t.TempDir()
	if err := (&Trainer{Dir: dirA}).run(ctx, old); err != nil {
		t.Fatal(err)
	}
	// The converted checkpoint, resumed for 2 more steps.
	dirB := filepath.Join(t.TempDir(), "new")
	if err := ConvertLegacy(legacy, dirB); err != nil {
		t.Fatal(err)
	}
	if _, _, err := checkpoint.ReadInference(legacy); !errors.Is(err, checkpoint.ErrLegacy) || !strings.Contains(err.Error(), "afin checkpoint convert") {
		t.Errorf("loading the old format: %v, want a message naming the convert command", err)
	}
	o := tinyTrainOptions(4)
	if err := (&Trainer{Dir: dirB, Override: []string{"steps"}}).Train(ctx, arch.Config{}, o, true); err != nil {
		t.Fatal(err)
	}
	a, err := loadState(dirA)
	if err != nil {
		t.Fatal(err)
	}
	b, err := loadState(dirB)
	if err != nil {
		t.Fatal(err)
	}
	if a.Step != 4 {
		t.Fatalf("step %d, want 4", a.Step)
	}
	sameState(t, a, b)
}

func TestResolveResume(t *testing.T) {
	stored := tinyTrainOptions(10)
	given := DefaultTrainOptions()
	given.Steps, given.LR = 20, 5e-4
	got, err := ResolveResume(stored, given, []string{"steps", "lr"})
	if err != nil {
		t.Fatal(err)
	}
	want := stored
	want.Steps, want.LR = 20, 5e-4
	if got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if _, err := ResolveResume(stored, given, []string{"nope"}); err == nil {
		t.Error("unknown option accepted")
	}
}
