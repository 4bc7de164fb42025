package flows

import (
	"context"
	"io"
	"os"
	"strings"
	"testing"
)

// TestFitProgressReachesTotal checks that the bar of a sweep ends at its
// total when the step count is not a multiple of the redraw batch (it
// used to stop 44 steps short per rate at 300 steps).
func TestFitProgressReachesTotal(t *testing.T) {
	master, slave := openPTY(t)
	defer master.Close()
	task := conjugateTask(2, 8, 1)
	o := Options{Arch: Arch{Layers: 1, Hidden: 8, Depth: 1}, Budgets: []int{300}, LRs: []float64{1e-3, 1e-2}, Progress: slave}
	done := make(chan string)
	go func() {
		b, _ := io.ReadAll(master) // ends with EIO once the slave closes
		done <- string(b)
	}()
	// internal/progress draws only when standard output is a terminal too,
	// and under go test it is a pipe: point it at the pseudo-terminal for
	// the fit, or no bar is drawn and the test has nothing to check.
	stdout := os.Stdout
	os.Stdout = slave
	_, err := Fit(context.Background(), task, IAF, o)
	os.Stdout = stdout
	if err != nil {
		t.Fatal(err)
	}
	slave.Close()
	out := <-done
	if out == "" {
		t.Fatal("no progress bar drawn with the fit's writer and stdout on a terminal")
	}
	if !strings.Contains(out, "600/600") {
		t.Errorf("bar never reached 600/600: %q", out)
	}
}
