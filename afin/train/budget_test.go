package train

import (
	"context"
	"testing"

	"github.com/afin-bench/afin/afin/engine"
)

// A run with a time budget stops once it is spent, with the schedule's
// steps refitted from the (unreachable) given count to the measured rate,
// and the checkpoint at the step it reached.
func TestTimeBudgetRefitsAndStops(t *testing.T) {
	dir := t.TempDir()
	o := tinyTrainOptions(1_000_000)
	tr := &Trainer{Dir: dir, Engine: engine.Choice{Engine: "native"}, TimeBudget: 3}
	if err := tr.Train(context.Background(), tinyConfig(), o, false); err != nil {
		t.Fatal(err)
	}
	s, err := loadState(dir)
	if err != nil {
		t.Fatal(err)
	}
	if s.Options.Steps >= o.Steps {
		t.Errorf("steps still %d: not refitted to the budget", s.Options.Steps)
	}
	if s.Step < 2 || s.Step > s.Options.Steps {
		t.Errorf("stopped at step %d of a refitted %d", s.Step, s.Options.Steps)
	}
}
