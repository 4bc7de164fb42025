package bench

import (
	"math"
	"sync"

	"github.com/afin-bench/afin/internal/cputime"
)

// cpuMeter attributes the process's CPU time to the spans of work running
// in it (a unit, or the building of a task and its reference).
//
// Why not per-thread CPU time: a unit is a goroutine that spawns others
// (a method's parallel loops, GoMLX's executors, the garbage collector),
// which run on whatever OS threads the scheduler picks, so neither
// RUSAGE_THREAD nor CLOCK_THREAD_CPUTIME_ID (even with
// runtime.LockOSThread) sees the unit's work. What is exact is the
// process's CPU time (getrusage RUSAGE_SELF): with one span running, its
// CPU is the process's CPU over the span, GC included. With several
// running at once (--workers > 1) the process's CPU over an interval is
// split equally among the spans running in it, the only attribution the
// kernel's figures allow; such a span is marked shared, so a cost fit can
// leave it out (tools/costfit does) and a reader knows it is a share.
type cpuMeter struct {
	mu      sync.Mutex
	read    func() (float64, error)
	last    float64
	acc     float64 // CPU seconds per running span, integrated since the start
	running map[*cpuSpan]bool
	broken  bool // the clock failed once: every figure is NaN from then on
}

// cpuSpan is one span of work on a cpuMeter.
type cpuSpan struct {
	m      *cpuMeter
	start  float64 // m.acc when the span started
	shared bool    // another span ran during this one
	ended  bool
	final  float64 // the span's CPU seconds once ended
}

func newCPUMeter(read func() (float64, error)) *cpuMeter {
	if read == nil {
		read = cputime.Process
	}
	m := &cpuMeter{read: read, running: map[*cpuSpan]bool{}}
	m.last, m.broken = m.now()
	return m
}

// now reads the clock; broken when it cannot.
func (m *cpuMeter) now() (float64, bool) {
	c, err := m.read()
	return c, err != nil
}

// advance books the CPU since the last reading to the running spans;
// m.mu held.
func (m *cpuMeter) advance() {
	if m.broken {
		return
	}
	c, broken := m.now()
	if broken {
		m.broken = true
		return
	}
	if n := len(m.running); n > 0 {
		m.acc += (c - m.last) / float64(n)
	}
	m.last = c
}

// begin starts a span.
func (m *cpuMeter) begin() *cpuSpan {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.advance()
	s := &cpuSpan{m: m, start: m.acc}
	m.running[s] = true
	if len(m.running) > 1 {
		for o := range m.running {
			o.shared = true
		}
	}
	return s
}

// seconds is the span's CPU so far (NaN when the clock is unavailable)
// and whether another span has run beside it.
func (s *cpuSpan) seconds() (float64, bool) {
	m := s.m
	m.mu.Lock()
	defer m.mu.Unlock()
	return s.secondsLocked()
}

func (s *cpuSpan) secondsLocked() (float64, bool) {
	m := s.m
	switch {
	case s.ended:
		return s.final, s.shared
	case m.broken:
		return math.NaN(), s.shared
	}
	m.advance()
	if m.broken {
		return math.NaN(), s.shared
	}
	return m.acc - s.start, s.shared
}

// end stops the span and returns its CPU seconds and whether it was
// shared; the span's figure no longer grows.
func (s *cpuSpan) end() (float64, bool) {
	m := s.m
	m.mu.Lock()
	defer m.mu.Unlock()
	c, shared := s.secondsLocked()
	s.ended, s.final = true, c
	delete(m.running, s)
	return c, shared
}
