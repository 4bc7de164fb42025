package bench

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/afin-bench/afin/internal/progress"
)

// A run's progress, weighted by each unit's estimated cost (the cost
// model): on a terminal a bar (progress.NewCost); elsewhere (Slurm,
// Kubernetes, nohup, a pipe) a log line at least every progressEvery and
// at a unit's end, but no more often than progressMinGap, so a flood of
// fast units prints a line every few seconds rather than thousands. Each
// line gives units done of total, CPU-hours done of estimated and an ETA:
// the elapsed time scaled by the estimated cost still to run over the
// estimated cost done, a running unit credited with its CPU time so far
// (up to its estimate), so the ETA moves inside a long unit too.
const (
	progressEvery  = 30 * time.Second
	progressMinGap = 10 * time.Second
)

// tracker is a run's progress.
type tracker struct {
	mu    sync.Mutex
	w     io.Writer // log lines; nil when a bar shows or no one listens
	bar   *progress.Bar
	label string
	now   func() time.Time

	units, done    int
	est, estDone   float64 // estimated CPU seconds: all, of the finished units
	cpuDone        float64 // measured CPU seconds of the finished units
	running        map[*unitProgress]bool
	start, printed time.Time

	stop chan struct{}
	wg   sync.WaitGroup
}

// unitProgress is a running unit as the tracker sees it.
type unitProgress struct {
	est float64
	cpu *cpuSpan
}

// newTracker starts tracking units of est estimated CPU seconds in all,
// to w: a bar when w is a terminal, log lines otherwise (nil w: silent).
// now is the clock (nil: time.Now); heartbeat starts the goroutine that
// prints a line when none has for progressEvery.
func newTracker(w io.Writer, label string, units int, est float64, now func() time.Time, heartbeat bool) *tracker {
	if now == nil {
		now = time.Now
	}
	t := &tracker{label: label, now: now, units: units, est: est, running: map[*unitProgress]bool{}, stop: make(chan struct{})}
	t.start, t.printed = now(), now()
	if w == nil || units == 0 {
		return t
	}
	if t.bar = progress.NewCost(w, label, est); t.bar != nil {
		t.describe()
		return t
	}
	t.w = w
	if heartbeat {
		t.wg.Add(1)
		go func() {
			defer t.wg.Done()
			tick := time.NewTicker(progressEvery / 6)
			defer tick.Stop()
			for {
				select {
				case <-t.stop:
					return
				case <-tick.C:
					t.heartbeat()
				}
			}
		}()
	}
	return t
}

// begin marks a unit of estimated cost est as running on span.
func (t *tracker) begin(est float64, span *cpuSpan) *unitProgress {
	u := &unitProgress{est: est, cpu: span}
	t.mu.Lock()
	t.running[u] = true
	t.mu.Unlock()
	return u
}

// end books a finished unit (count 0 for one interrupted: it is not done)
// with the CPU seconds it used.
func (t *tracker) end(u *unitProgress, count int, cpu float64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.running, u)
	if count == 0 {
		return
	}
	t.done += count
	t.estDone += u.est
	if cpu == cpu { // not NaN: a system without a CPU clock
		t.cpuDone += cpu
	}
	if t.bar != nil {
		t.bar.Add(max(int(u.est+0.5), 1))
		t.describe()
		return
	}
	if t.w != nil && t.now().Sub(t.printed) >= progressMinGap {
		t.printLocked()
	}
}

// credit books est estimated CPU seconds done outside any unit (a task's
// target built).
func (t *tracker) credit(est float64) {
	t.mu.Lock()
	t.estDone += est
	t.mu.Unlock()
}

// heartbeat prints a line when none has been printed for progressEvery.
func (t *tracker) heartbeat() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.w != nil && t.now().Sub(t.printed) >= progressEvery-progressEvery/6 {
		t.printLocked()
	}
}

// finish stops the heartbeat and ends the bar or prints the last line.
func (t *tracker) finish() {
	close(t.stop)
	t.wg.Wait()
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.bar != nil {
		t.bar.Finish()
		return
	}
	if t.w != nil && t.now().Sub(t.start) >= progressMinGap {
		t.printLocked()
	}
}

// doneCost is the estimated cost done: the finished units' estimates and
// each running unit's CPU time so far, capped at its estimate. t.mu held.
func (t *tracker) doneCost() float64 {
	c := t.estDone
	for u := range t.running {
		if u.cpu == nil {
			continue
		}
		if s, _ := u.cpu.seconds(); s == s {
			c += min(s, u.est)
		}
	}
	return c
}

// line is the progress in words. t.mu held.
func (t *tracker) line() string {
	elapsed := t.now().Sub(t.start)
	credit := t.doneCost()
	eta := "unknown"
	if credit > 0 && t.est > credit {
		eta = roundDuration(time.Duration(float64(elapsed) * (t.est - credit) / credit)).String()
	} else if t.done == t.units {
		eta = "0s"
	}
	return fmt.Sprintf("%s: %d/%d units, %.2f of %.2f est. CPU-hours (%.1f%%; %.2f CPU-hours measured), elapsed %s, ETA %s",
		t.label, t.done, t.units, credit/3600, t.est/3600, 100*credit/max(t.est, 1e-9), t.cpuDone/3600,
		roundDuration(elapsed), eta)
}

func (t *tracker) printLocked() {
	t.printed = t.now()
	fmt.Fprintf(t.w, "%s progress %s\n", t.printed.UTC().Format(time.RFC3339), t.line())
}

// describe puts the unit count on the bar. t.mu held.
func (t *tracker) describe() {
	t.bar.Describe(fmt.Sprintf("%s %d/%d units", t.label, t.done, t.units))
}

// roundDuration rounds to the second (to the minute beyond an hour).
func roundDuration(d time.Duration) time.Duration {
	if d > time.Hour {
		return d.Round(time.Minute)
	}
	return d.Round(time.Second)
}
