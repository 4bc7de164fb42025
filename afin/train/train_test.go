package train

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/afin-bench/afin/afin/arch"
	"github.com/afin-bench/afin/afin/engine"
	"github.com/afin-bench/afin/internal/countctx"
)

func tinyTrainOptions(steps int) TrainOptions {
	o := DefaultTrainOptions()
	o.Steps, o.BatchTasks, o.Warmup, o.LR = steps, 2, 2, 1e-3
	o.DMax, o.NMax = 3, 4
	o.EMAStart = 1
	o.CheckpointEvery, o.CheckpointSeconds, o.EvalEvery, o.LogEvery = 0, 0, 0, 1
	return o
}

// A run interrupted and resumed must end exactly where an uninterrupted
// run ends: weights, EMA, moments and the task stream all restart from
// the checkpoint.
func TestResumeIsBitForBit(t *testing.T) {
	for _, engine := range []string{"native", "gomlx"} {
		t.Run(engine, func(t *testing.T) {
			testResumeIsBitForBit(t, engine)
		})
	}
}

func testResumeIsBitForBit(t *testing.T, eng string) {
	cfg := tinyConfig()
	ctx := context.Background()
	straight := t.TempDir()
	if err := (&Trainer{Dir: straight, Engine: engine.Choice{Engine: eng}}).Train(ctx, cfg, tinyTrainOptions(4), false); err != nil {
		t.Fatal(err)
	}
	// The first leg has the same 4-step schedule and is interrupted after
	// step 2, as a killed run would be.
	split := t.TempDir()
	o := tinyTrainOptions(4)
	o.CheckpointEvery = 2
	ctx2, cancel := context.WithCancel(ctx)
	tr := &Trainer{Dir: split, Engine: engine.Choice{Engine: eng}, Progress: func(step, _ int) {
		if step == 2 {
			cancel()
		}
	}}
	if err := tr.Train(ctx2, cfg, o, false); err == nil {
		t.Fatal("cancelled run returned no error")
	}
	if err := (&Trainer{Dir: split, Engine: engine.Choice{Engine: eng}}).Train(ctx, cfg, tinyTrainOptions(4), true); err != nil {
		t.Fatal(err)
	}
	a, err := loadState(straight)
	if err != nil {
		t.Fatal(err)
	}
	b, err := loadState(split)
	if err != nil {
		t.Fatal(err)
	}
	if a.Step != 4 || b.Step != 4 {
		t.Fatalf("steps %d and %d, want 4", a.Step, b.Step)
	}
	for i := range a.Params {
		if !slices.Equal(a.Params[i], b.Params[i]) || !slices.Equal(a.EMA[i], b.EMA[i]) || !slices.Equal(a.V[i], b.V[i]) {
			t.Fatalf("parameter %s differs after resume", a.Names[i])
		}
	}
	// Every log record says what the host's share of a step took.
	raw, err := os.ReadFile(filepath.Join(straight, LogFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		var rec LogRecord
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatal(err)
		}
		if !(rec.HostUpdateSeconds > 0) || rec.HostUpdateSeconds > rec.Seconds {
			t.Errorf("step %d: host update %g s, of %g s in all", rec.Step, rec.HostUpdateSeconds, rec.Seconds)
		}
	}
	init := arch.MustNew(cfg)
	init.Init(rand.New(rand.NewPCG(0, 0x5eed)))
	if slices.Equal(a.Params[0], init.Tensors()[0].Data) {
		t.Fatal("training did not change the weights")
	}
}

func TestLearningRateSchedule(t *testing.T) {
	o := DefaultTrainOptions()
	o.Steps, o.Warmup, o.LR = 11000, 1000, 2e-4
	tests := []struct {
		step int
		want float64
	}{
		{0, 2e-6}, {1000, 2e-4}, {6000, 1.1e-4}, {11000, 2e-5},
	}
	for _, tc := range tests {
		if got := o.LearningRate(tc.step); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("lr(%d) = %g, want %g", tc.step, got, tc.want)
		}
	}
}

// A cancel anywhere inside a step (batch building, forward, backward, a
// held-out evaluation) stops training at the next look at the context,
// saves the checkpoint of the last whole step, and a resume from it ends
// bit for bit where an uninterrupted run ends: the dropped step left no
// trace, the task stream's RNG included.
func TestTrainCancelInsideStep(t *testing.T) {
	cfg := tinyConfig()
	o := tinyTrainOptions(4)
	o.EvalEvery = 2
	o.Workers = 2 // the looks after a cancel grow with the gradient workers
	straight := t.TempDir()
	whole := countctx.CancelAt(0)
	defer whole.Stop()
	if err := (&Trainer{Dir: straight}).Train(whole, cfg, o, false); err != nil {
		t.Fatal(err)
	}
	want, err := loadState(straight)
	if err != nil {
		t.Fatal(err)
	}
	looks := whole.Calls()
	if looks < 40 {
		t.Fatalf("4 steps look at the context %d times: too few to cancel inside a step", looks)
	}
	stopped := map[int]bool{}
	for _, at := range []int64{2, looks / 5, looks / 3, looks / 2, 2 * looks / 3, looks - looks/6} {
		dir := t.TempDir()
		ctx := countctx.CancelAt(at)
		err := (&Trainer{Dir: dir}).Train(ctx, cfg, o, false)
		ctx.Stop()
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("cancel at look %d of %d: err = %v, want context.Canceled", at, looks, err)
		}
		// The error path looks again (to tell a cancel from a failure, and
		// in the loop's condition), and so may the other gradient worker.
		if ctx.After() > 5 {
			t.Errorf("cancel at look %d of %d: looked %d more times, want ≤ 5", at, looks, ctx.After())
		}
		mid, err := loadState(dir)
		if err != nil {
			t.Fatalf("cancel at look %d: no checkpoint: %v", at, err)
		}
		stopped[mid.Step] = true
		if err := (&Trainer{Dir: dir}).Train(context.Background(), cfg, o, true); err != nil {
			t.Fatal(err)
		}
		got, err := loadState(dir)
		if err != nil {
			t.Fatal(err)
		}
		for i := range want.Params {
			if !slices.Equal(want.Params[i], got.Params[i]) || !slices.Equal(want.EMA[i], got.EMA[i]) {
				t.Fatalf("cancel at look %d (checkpoint at step %d): parameter %s differs after resume", at, mid.Step, want.Names[i])
			}
		}
	}
	if len(stopped) < 3 {
		t.Errorf("cancels stopped at steps %v only: not spread over the run", stopped)
	}
}
