package progress

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestNewQuietOffTerminal(t *testing.T) {
	var buf bytes.Buffer
	b := New(&buf, "x", 10) // a buffer is not a terminal
	if b != nil {
		t.Fatalf("New on a non-terminal writer = %v, want nil", b)
	}
	b.Add(3) // nil bars are no-ops
	b.Finish()
	if buf.Len() != 0 {
		t.Errorf("nil bar wrote %q", buf.String())
	}
}

func TestBarOutput(t *testing.T) {
	tests := []struct {
		name  string
		steps int
		total int
		want  []string
	}{
		{"complete", 4, 4, []string{"job", "4/4", "steps/s"}},
		{"stopped short", 2, 5, []string{"job", "2/5", "steps/s"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			b := newBar(&buf, "job", tc.total)
			for i := 0; i < tc.steps; i++ {
				time.Sleep(30 * time.Millisecond) // let the throttle pass once
				b.Add(1)
			}
			time.Sleep(120 * time.Millisecond)
			b.Add(0)
			b.Finish()
			out := buf.String()
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("output %q lacks %q", out, w)
				}
			}
			if !strings.HasSuffix(out, "\n") {
				t.Errorf("output %q does not end the line", out)
			}
		})
	}
}

func TestEmptyBarIsNil(t *testing.T) {
	if b := newBar(&bytes.Buffer{}, "x", 0); b != nil {
		t.Errorf("bar over 0 steps = %v, want nil", b)
	}
}

// BenchmarkAdd measures the per-step cost a sampler pays for its bar.
func BenchmarkAdd(b *testing.B) {
	var buf bytes.Buffer
	bar := newBar(&buf, "bench", b.N+1)
	for i := 0; i < b.N; i++ {
		bar.Add(1)
	}
}
