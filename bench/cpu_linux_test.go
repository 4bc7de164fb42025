//go:build linux

package bench

import (
	"context"
	"math"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/afin-bench/afin/methods"
	"github.com/afin-bench/afin/records"
)

// threadCPU is the CPU time of the calling OS thread.
func threadCPU(t *testing.T) float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_THREAD, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// spinMethod burns want CPU seconds on one OS thread it holds, measures
// what it burned with that thread's own clock (the truth: nothing else
// runs on a locked thread), and then emits fakeMethod's points.
type spinMethod struct {
	fakeMethod
	want  float64
	t     *testing.T
	mu    *sync.Mutex
	truth *[]float64
}

func (m spinMethod) Run(ctx context.Context, job *methods.Job, emit func(methods.Point) error) error {
	done := make(chan float64)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		c0 := threadCPU(m.t)
		x := 1.0
		for threadCPU(m.t)-c0 < m.want {
			for range 100000 {
				x = x*1.0000001 + 1e-9
			}
		}
		if x == 0 {
			panic("unreachable: keeps the loop")
		}
		done <- threadCPU(m.t) - c0
	}()
	burned := <-done
	m.mu.Lock()
	*m.truth = append(*m.truth, burned)
	m.mu.Unlock()
	return m.fakeMethod.Run(ctx, job, emit)
}

// TestUnitCPUSecondsOfKnownWork: a unit that burns a known CPU time
// carries about that much in its records' cpu_seconds (its scoring adds a
// little), alone and with two units running at once (--workers 2, where
// the figure is an equal share and the records say so).
func TestUnitCPUSecondsOfKnownWork(t *testing.T) {
	const burn = 0.4
	for _, workers := range []int{1, 2} {
		t.Run(map[int]string{1: "one worker", 2: "two workers"}[workers], func(t *testing.T) {
			var mu sync.Mutex
			var truth []float64
			cfg := fakeConfig(t.TempDir(), func(name string, _ *methods.Env) (methods.Method, error) {
				return spinMethod{fakeMethod: fakeMethod{name: name}, want: burn, t: t, mu: &mu, truth: &truth}, nil
			})
			settings, _ := Settings("synthetic")
			cfg.Settings, cfg.Seeds, cfg.Methods, cfg.Workers = settings[:2], []uint64{0}, []string{"nuts"}, workers
			if _, err := Run(context.Background(), cfg); err != nil {
				t.Fatal(err)
			}
			recs, err := records.ReadDir(cfg.Results)
			if err != nil {
				t.Fatal(err)
			}
			unitCPU := map[string]float64{}
			for _, r := range recs {
				unitCPU[r.UnitKey()] = max(unitCPU[r.UnitKey()], float64(r.CPUSeconds))
				if r.CPUShared != (workers > 1) {
					t.Errorf("%s: cpu_shared %v with %d workers", r.Key(), r.CPUShared, workers)
				}
			}
			if len(unitCPU) != 2 || len(truth) != 2 {
				t.Fatalf("%d units recorded, %d run; want 2", len(unitCPU), len(truth))
			}
			mean := (truth[0] + truth[1]) / 2
			// Each unit's own work is its spin (mean, the two being equal)
			// plus drawing and scoring two small points. Alone, a unit's
			// CPU time is its own to 15%. Two units at once share the
			// process's CPU time by their overlap (cpu_shared): the sum is
			// kept to 15%, each unit's share only to 35%, as the scheduler
			// of a busy machine gives one spin more of the overlap than
			// the other (measured 0.354 and 0.468 for 0.401 each).
			tol := 0.15
			if workers > 1 {
				tol = 0.35
			}
			var sum float64
			for k, c := range unitCPU {
				t.Logf("%s: cpu_seconds %.3f, burned %.3f", k, c, mean)
				sum += c
				if math.Abs(c-mean) > tol*mean {
					t.Errorf("%s: cpu_seconds %.3f, the unit burned %.3f (±%.0f%%)", k, c, mean, 100*tol)
				}
			}
			if math.Abs(sum-2*mean) > 0.15*2*mean {
				t.Errorf("the units' cpu_seconds sum to %.3f, they burned %.3f (±15%%)", sum, 2*mean)
			}
		})
	}
}
