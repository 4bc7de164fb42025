// Package progress draws a one-line progress bar on a terminal for afin's
// long-running commands, and stays silent when its writer is not a
// terminal, so logs and piped output are not littered with bars.
package progress

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"
)

// Bar is a progress bar over a known number of steps. A nil *Bar is valid
// and does nothing, so callers need no checks. Safe for concurrent use.
type Bar struct {
	mu      sync.Mutex
	w       io.Writer
	label   string
	total   int
	done    int
	start   time.Time
	lastOut time.Time
}

// New returns a bar writing to w if both w and standard output are
// terminals, and nil otherwise: output piped to a file or another program
// gets no bars (DESIGN.md: quiet when stdout is not a terminal).
func New(w io.Writer, label string, total int) *Bar {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) || !term.IsTerminal(int(os.Stdout.Fd())) {
		return nil
	}
	return &Bar{w: w, label: label, total: total, start: time.Now()}
}

// Add advances the bar by n steps, redrawing at most ten times a second.
func (b *Bar) Add(n int) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.done += n
	now := time.Now()
	if now.Sub(b.lastOut) < 100*time.Millisecond && b.done < b.total {
		return
	}
	b.lastOut = now
	b.draw(now)
}

func (b *Bar) draw(now time.Time) {
	const width = 30
	frac := 0.0
	if b.total > 0 {
		frac = float64(b.done) / float64(b.total)
	}
	if frac > 1 {
		frac = 1
	}
	fill := int(frac * width)
	elapsed := now.Sub(b.start)
	eta := ""
	if b.done > 0 && b.done < b.total {
		rem := time.Duration(float64(elapsed) * (1/frac - 1))
		eta = " eta " + rem.Round(time.Second).String()
	}
	fmt.Fprintf(b.w, "\r%s [%s%s] %d/%d %s%s\x1b[K", b.label,
		strings.Repeat("=", fill), strings.Repeat(" ", width-fill),
		b.done, b.total, elapsed.Round(time.Second), eta)
}

// Finish draws the final state and ends the line.
func (b *Bar) Finish() {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.draw(time.Now())
	fmt.Fprintln(b.w)
}
