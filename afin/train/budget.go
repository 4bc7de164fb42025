package train

import (
	"fmt"
	"io"
	"time"
)

// timeBudget fits a run's length to a wall-clock budget (a GPU slot): at
// 10%, 40% and 70% of the budget it sets Steps to the steps done plus
// what the session's step rate so far fits in the time left, so the
// cosine schedule ends with the budget, and it ends the session once the
// budget is spent. Compiling counts against the budget but not in the
// rate, which is measured from the first step.
type timeBudget struct {
	seconds    float64
	start      time.Time
	first      time.Time // when the session's first step ended
	firstStep  int       // the step count then
	checkpoint int       // refits done
}

var refitAt = []float64{0.1, 0.4, 0.7, 0.9}

func newTimeBudget(seconds float64) *timeBudget {
	if seconds <= 0 {
		return nil
	}
	return &timeBudget{seconds: seconds, start: time.Now()}
}

// fit refits s's Steps when a refit point has passed and reports whether
// the budget is spent.
func (b *timeBudget) fit(s *state, log io.Writer) bool {
	if b == nil {
		return false
	}
	now := time.Now()
	if b.first.IsZero() {
		b.first, b.firstStep = now, s.Step
		return false
	}
	used := now.Sub(b.start).Seconds()
	if used >= b.seconds {
		return true
	}
	if b.checkpoint < len(refitAt) && used >= refitAt[b.checkpoint]*b.seconds && s.Step > b.firstStep {
		b.checkpoint++
		rate := float64(s.Step-b.firstStep) / now.Sub(b.first).Seconds()
		steps := s.Step + int(rate*(b.seconds-used))
		if steps != s.Options.Steps && steps > s.Step {
			if log != nil {
				fmt.Fprintf(log, "afin train: %.1f steps/s; the schedule now spans %d steps, to end with the %.0f s budget\n", rate, steps, b.seconds)
			}
			s.Options.Steps = steps
		}
	}
	return false
}
