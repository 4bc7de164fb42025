package main

import (
	"fmt"
	"io"
	"math"
	"sync"
	"time"

	"github.com/afin-bench/afin/factor"
	"github.com/afin-bench/afin/internal/progress"
	"github.com/afin-bench/afin/methods"
)

// How a long forward pass shows its progress: a bar in a terminal once
// the pass has run passBarAfter, otherwise a line at most every
// passLineEvery (a log, a pipe, a batch job).
const (
	passBarAfter  = 3 * time.Second
	passLineEvery = 30 * time.Second
	passBarSteps  = 1000
)

// passProgress shows one command's forward passes (afin.WithForwardProgress
// reports done of total FLOPs per pass). A pass shorter than
// passBarAfter shows nothing. Safe for concurrent use.
type passProgress struct {
	mu    sync.Mutex
	w     io.Writer
	label string
	now   func() time.Time
	// newBar is progress.New on w: nil off a terminal.
	newBar func(total int) *progress.Bar

	start, last time.Time
	bar         *progress.Bar
	shown       int // bar steps drawn
	noBar       bool
}

func newPassProgress(w io.Writer, label string) *passProgress {
	return &passProgress{w: w, label: label, now: time.Now,
		newBar: func(total int) *progress.Bar { return progress.New(w, label, total) }}
}

// report is the afin.WithForwardProgress callback.
func (p *passProgress) report(done, total int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	if done == 0 || p.start.IsZero() { // a new pass
		p.finishLocked()
		p.start, p.last = now, now
	}
	elapsed := now.Sub(p.start)
	if total <= 0 || elapsed < passBarAfter {
		return // a short pass shows nothing
	}
	frac := math.Min(1, float64(done)/float64(total))
	if p.bar == nil && !p.noBar {
		p.bar = p.newBar(passBarSteps)
		p.noBar = p.bar == nil
	}
	if p.bar != nil {
		step := int(frac * passBarSteps)
		p.bar.Add(step - p.shown)
		p.shown = step
		if done >= total {
			p.finishLocked()
		}
		return
	}
	// Off a terminal: a line every passLineEvery, and a last one at the
	// end of a pass that printed any.
	if now.Sub(p.last) >= passLineEvery || done >= total && p.last != p.start {
		p.last = now
		fmt.Fprintf(p.w, "%s: %.0f%% (%.3g of %.3g FLOP) after %s%s\n", p.label, 100*frac, float64(done), float64(total),
			elapsed.Round(time.Second), eta(elapsed, frac))
	}
	if done >= total {
		p.start = time.Time{}
	}
}

// eta is ", about T left" at the pass's rate so far.
func eta(elapsed time.Duration, frac float64) string {
	if frac <= 0 || frac >= 1 {
		return ""
	}
	left := time.Duration(float64(elapsed) * (1 - frac) / frac)
	return fmt.Sprintf(", about %s left", left.Round(time.Second))
}

// finishLocked ends a bar that is showing.
func (p *passProgress) finishLocked() {
	if p.bar != nil {
		p.bar.Finish()
	}
	p.bar, p.shown, p.start = nil, 0, time.Time{}
}

// warnings prints, on stderr, what a method says before it works
// (methods.Env.Warn), and remembers it so the warnings the answer
// carries are not printed a second time.
type warnings struct {
	mu     sync.Mutex
	w      io.Writer
	prefix string
	said   map[string]bool
}

func newWarnings(w io.Writer, command string) *warnings {
	return &warnings{w: w, prefix: "afin " + command + ": warning: ", said: map[string]bool{}}
}

// warn prints msg unless it was said already.
func (s *warnings) warn(msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.said[msg] {
		return
	}
	s.said[msg] = true
	fmt.Fprintln(s.w, s.prefix+msg)
}

// largeTaskEntries is the size (sites × d) from which infer says, before
// a method that evaluates the log density many times starts, how long
// one evaluation takes: at 10⁶ covariate values one gradient takes
// milliseconds, and NUTS's defaults make thousands of them.
const largeTaskEntries = 1_000_000

// largeTaskNote says, for a task of at least limit (largeTaskEntries)
// covariate values, what one log-density gradient costs here (the
// packed evaluator the methods run, timed, best of three) and, for NUTS, the least number of them its options make: every
// iteration takes at least one leapfrog step. "" for a smaller task.
func largeTaskNote(task *factor.Task, method string, opts methods.Options, limit int) string {
	n, d := task.N(), task.D
	if n*d < limit {
		return ""
	}
	// The packed evaluator is the one the samplers and VI run on.
	pk := task.Packed()
	z, g := make([]float64, d), make([]float64, d)
	best := time.Duration(math.MaxInt64)
	for range 3 {
		start := time.Now()
		pk.LogDensityGrad(z, g)
		best = min(best, time.Since(start))
	}
	s := fmt.Sprintf("large task (N=%d sites, d=%d): one log-density gradient takes %s here", n, d, best.Round(time.Microsecond))
	if method == methods.NUTS {
		o := opts.NUTS
		least := o.Chains * o.Warmup
		s += fmt.Sprintf(", and NUTS makes at least %d of them in warm-up alone (%d chains × %d iterations): at least %s",
			least, o.Chains, o.Warmup, (time.Duration(least) * best).Round(time.Second))
	}
	return s
}
