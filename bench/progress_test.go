package bench

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// TestProgressLines drives a tracker off a terminal with a clock it sets:
// fast units print nothing until progressMinGap has passed, a heartbeat
// prints after progressEvery of silence, a slow unit's end prints a line,
// and the ETA weighs units by estimated cost, not by count.
func TestProgressLines(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	var buf bytes.Buffer
	// Four units: one of 300 estimated CPU-s, three of 100/3.
	tr := newTracker(&buf, "bench x", 4, 400, clock, false)
	lines := func() []string {
		s := strings.TrimSpace(buf.String())
		if s == "" {
			return nil
		}
		return strings.Split(s, "\n")
	}
	type step struct {
		at    time.Duration // since the start
		do    string        // "end" a unit of est, or "beat"
		est   float64
		lines int    // lines printed so far
		want  string // in the last line
	}
	steps := []step{
		{at: 2 * time.Second, do: "end", est: 100.0 / 3, lines: 0},
		{at: 4 * time.Second, do: "end", est: 100.0 / 3, lines: 0},
		{at: 20 * time.Second, do: "beat", lines: 0},
		// 30 s of silence: a heartbeat line; 66.7 of 400 done in 30 s.
		{at: 30 * time.Second, do: "beat", lines: 1, want: "2/4 units"},
		{at: 35 * time.Second, do: "beat", lines: 1},
		// The 300 CPU-s unit ends at 60 s: 366.7 of 400 done, so the
		// cost-weighted ETA is 60 s × 33.3 / 366.7 ≈ 5 s, where counting
		// units (3 of 4 in 60 s) would say 20 s.
		{at: 60 * time.Second, do: "end", est: 300, lines: 2, want: "ETA 5s"},
	}
	for _, s := range steps {
		now = now.Add(s.at - now.Sub(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)))
		switch s.do {
		case "end":
			tr.end(tr.begin(s.est, nil), 1, s.est)
		case "beat":
			tr.heartbeat()
		}
		got := lines()
		if len(got) != s.lines {
			t.Fatalf("at %v: %d lines %q, want %d", s.at, len(got), got, s.lines)
		}
		if s.want != "" && !strings.Contains(got[len(got)-1], s.want) {
			t.Errorf("at %v: line %q lacks %q", s.at, got[len(got)-1], s.want)
		}
	}
	tr.finish()
	if got := lines(); !strings.Contains(got[len(got)-1], "3/4 units") || !strings.Contains(got[len(got)-1], "of 0.11 est. CPU-hours") {
		t.Errorf("last line %q", got[len(got)-1])
	}
}

// TestSilentTracker: with no writer nothing is printed, however long the
// run.
func TestSilentTracker(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tr := newTracker(nil, "bench x", 2, 10, func() time.Time { return now }, false)
	for range 2 {
		now = now.Add(time.Minute)
		tr.end(tr.begin(5, nil), 1, 5)
		tr.heartbeat()
	}
	tr.finish()
}
