// Package progress draws a one-line progress bar on a terminal for afin's
// long-running commands, and stays silent when its writer is not a
// terminal, so logs and piped output are not littered with bars.
//
// The drawing (throttling, rate, ETA, terminal width) is delegated to
// github.com/schollz/progressbar/v3, which GoMLX already brings into the
// module graph; this package only adds the terminal check and a nil-safe
// handle, so call sites need no "is there a bar?" branches.
package progress

import (
	"fmt"
	"io"
	"math"
	"os"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// Bar is a progress bar over a known number of steps. A nil *Bar is valid
// and does nothing, so callers need no checks. Safe for concurrent use.
type Bar struct {
	mu    sync.Mutex
	p     *progressbar.ProgressBar
	done  int
	total int
}

// New returns a bar writing to w if both w and standard output are
// terminals, and nil otherwise: output piped to a file or another program
// gets no bars (DESIGN.md: quiet when stdout is not a terminal). A bar
// over no steps is nil too: there is nothing to show.
func New(w io.Writer, label string, total int) *Bar {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) || !term.IsTerminal(int(os.Stdout.Fd())) {
		return nil
	}
	return newBar(w, label, total)
}

// NewCost is New over estimated cost rather than steps: the bar advances
// by each finished piece's estimated CPU seconds, so its rate and ETA
// weigh pieces by cost (a benchmark's units differ in cost by over
// 1,000×, and an ETA counting them would stall inside a costly one).
// Describe keeps the piece count in the label.
func NewCost(w io.Writer, label string, cpuSeconds float64) *Bar {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) || !term.IsTerminal(int(os.Stdout.Fd())) {
		return nil
	}
	return newBarOf(w, label, max(int(math.Ceil(cpuSeconds)), 1), "est. CPU-s")
}

// Describe replaces the bar's label.
func (b *Bar) Describe(label string) {
	if b == nil {
		return
	}
	b.p.Describe(label)
}

// newBar builds the bar without the terminal check, for tests.
func newBar(w io.Writer, label string, total int) *Bar {
	return newBarOf(w, label, total, "steps")
}

func newBarOf(w io.Writer, label string, total int, unit string) *Bar {
	if total <= 0 {
		return nil
	}
	p := progressbar.NewOptions(total,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(label),
		progressbar.OptionSetWidth(30),
		progressbar.OptionShowCount(),
		progressbar.OptionShowIts(), // rate, steps per second
		progressbar.OptionSetItsString(unit),
		progressbar.OptionSetPredictTime(true), // elapsed and ETA
		progressbar.OptionSetElapsedTime(true),
		// The old bar redrew at most ten times a second; keep that so a
		// sampler calling Add per draw does not spend its time printing.
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionShowElapsedTimeOnFinish(),
		progressbar.OptionOnCompletion(func() { fmt.Fprintln(w) }),
	)
	return &Bar{p: p, total: total}
}

// Add advances the bar by n steps.
func (b *Bar) Add(n int) {
	if b == nil {
		return
	}
	b.mu.Lock()
	b.done += n
	b.mu.Unlock()
	// Drawing errors (a closed terminal) must not stop the work the bar
	// reports on, so they are dropped.
	_ = b.p.Add(n)
}

// Finish draws the final state and ends the line. A bar stopped short (an
// interrupted run) keeps its count rather than jumping to 100%.
func (b *Bar) Finish() {
	if b == nil {
		return
	}
	b.mu.Lock()
	complete := b.done >= b.total
	b.mu.Unlock()
	if complete {
		_ = b.p.Finish()
		return
	}
	_ = b.p.Exit()
}
