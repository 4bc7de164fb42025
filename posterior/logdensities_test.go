package posterior_test

import (
	"context"
	"errors"
	"math"
	"runtime"
	"slices"
	"testing"

	"github.com/afin-bench/afin/posterior"
)

// TestLogDensitiesBatched: a target with a batched evaluator (factor's
// Packed) is evaluated a chunk per call, and the values are the same on
// one core and on several, each equal to the batched value of its row
// alone and to LogDensity up to rounding.
func TestLogDensitiesBatched(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	prop, _ := wideProposals(4, 3*4096+17, 8)
	for _, task := range costTasks(t) {
		p := task.Packed()
		runtime.GOMAXPROCS(1)
		one, err := posterior.LogDensities(context.Background(), p, prop)
		if err != nil {
			t.Fatal(err)
		}
		runtime.GOMAXPROCS(4)
		four, err := posterior.LogDensities(context.Background(), p, prop)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(one, four) {
			t.Fatalf("%s: log p̃ differs between 1 and 4 cores", task.Name)
		}
		alone := make([]float64, 1)
		for s := range prop.Len() {
			if err := p.LogDensities(prop.Row(s), alone); err != nil {
				t.Fatal(err)
			}
			want := p.LogDensity(prop.Row(s))
			if one[s] != alone[0] || math.Abs(one[s]-want) > 1e-9*math.Max(1, math.Abs(want)) {
				t.Fatalf("%s draw %d: %v in a chunk, %v alone, LogDensity %v", task.Name, s, one[s], alone[0], want)
			}
		}
	}
}

// failingBatch is a batched target whose block evaluation fails.
type failingBatch struct{}

func (failingBatch) LogDensity([]float64) float64 { return 0 }

func (failingBatch) LogDensities(z, out []float64) error { return errors.New("no block today") }

func TestLogDensitiesBatchError(t *testing.T) {
	prop, _ := wideProposals(4, 5000, 9)
	if _, err := posterior.LogDensities(context.Background(), failingBatch{}, prop); err == nil {
		t.Fatal("a failing block evaluation gave no error")
	}
}
