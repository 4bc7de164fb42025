package cputime

import "testing"

// TestProcessGrows: spinning adds CPU time, and the clock never goes back.
func TestProcessGrows(t *testing.T) {
	c0, err := Process()
	if err != nil {
		t.Fatal(err)
	}
	if c0 < 0 {
		t.Fatalf("CPU time %g < 0", c0)
	}
	x := 1.0
	c1 := c0
	for i := 0; c1 <= c0; i++ {
		if i > 1e4 {
			t.Fatalf("CPU time stayed at %g after %d iterations", c0, i)
		}
		for j := 0; j < 1e6; j++ {
			x = x*1.0000001 + 1e-9
		}
		if c1, err = Process(); err != nil {
			t.Fatal(err)
		}
	}
	if x == 0 {
		t.Fatal("unreachable: keeps the loop")
	}
}
