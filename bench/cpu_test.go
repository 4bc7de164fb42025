package bench

import (
	"math"
	"testing"
)

// TestCPUMeterShares drives the meter with a clock it sets: one span
// alone gets all of the process's CPU, spans running together share it
// equally and are marked shared, CPU between spans is nobody's, and an
// ended span's figure no longer grows.
func TestCPUMeterShares(t *testing.T) {
	clock := 0.0
	m := newCPUMeter(func() (float64, error) { return clock, nil })
	clock = 5 // before any span: nobody's
	a := m.begin()
	clock = 7 // a alone: 2
	b := m.begin()
	clock = 11 // a and b: 2 each
	ca, sa := a.end()
	clock = 14 // b alone: 3
	cb, sb := b.end()
	clock = 20
	c := m.begin()
	clock = 21
	cc, sc := c.seconds()
	tests := []struct {
		name       string
		got, want  float64
		shared     bool
		wantShared bool
	}{
		{"a", ca, 4, sa, true},
		{"b", cb, 5, sb, true},
		{"c so far", cc, 1, sc, false},
	}
	for _, tc := range tests {
		if math.Abs(tc.got-tc.want) > 1e-12 || tc.shared != tc.wantShared {
			t.Errorf("%s: %g CPU-s shared %v, want %g shared %v", tc.name, tc.got, tc.shared, tc.want, tc.wantShared)
		}
	}
	clock = 40
	if again, _ := a.seconds(); again != ca {
		t.Errorf("an ended span grew from %g to %g", ca, again)
	}
}

// TestCPUMeterWithoutClock: a system without a CPU clock gives NaN, never
// a wrong number.
func TestCPUMeterWithoutClock(t *testing.T) {
	m := newCPUMeter(func() (float64, error) { return 0, errNoClock })
	s := m.begin()
	if c, _ := s.end(); !math.IsNaN(c) {
		t.Errorf("no clock: %g CPU-s, want NaN", c)
	}
}

var errNoClock = errTest("no CPU clock")

type errTest string

func (e errTest) Error() string { return string(e) }
