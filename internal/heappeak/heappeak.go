// Package heappeak samples the Go heap while work runs, for the tests
// that hold a memory model (the native engine's and the GoMLX engine's)
// to what a pass really allocates.
package heappeak

import (
	"runtime/metrics"
	"time"
)

// Sample reads the heap's object bytes (live and not yet swept) every
// interval until stop is closed, then sends the largest value seen.
func Sample(stop <-chan struct{}, every time.Duration) <-chan uint64 {
	out := make(chan uint64, 1)
	go func() {
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		var peak uint64
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			metrics.Read(s)
			peak = max(peak, s[0].Value.Uint64())
			select {
			case <-stop:
				out <- peak
				return
			case <-tick.C:
			}
		}
	}()
	return out
}

// Now is the heap's object bytes at this moment.
func Now() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}
