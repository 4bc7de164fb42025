package cpu

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/afin-bench/afin/internal/heappeak"
)

// BenchmarkPeakMemory measures the heap growth of one forward pass (input
// batch included) at d = 4 and N = 1k, 10k, 100k, beside
// PredictPeakBytes. The paper config at N = 100k takes minutes: set
// AFIN_BENCH_SLOW=1 to run it.
func BenchmarkPeakMemory(b *testing.B) {
	for _, name := range []string{"small", "paper"} {
		for _, n := range []int{1000, 10000, 100000} {
			b.Run(fmt.Sprintf("%s/d=4,N=%d", name, n), func(b *testing.B) {
				if name == "paper" && n == 100000 && os.Getenv("AFIN_BENCH_SLOW") == "" {
					b.Skip("set AFIN_BENCH_SLOW=1")
				}
				net := newTestNet(b, name)
				var peak uint64
				for range b.N {
					net.pool = sync.Pool{} // every pass starts without a workspace
					runtime.GC()
					base := heappeak.Now()
					stop := make(chan struct{})
					res := heappeak.Sample(stop, time.Millisecond)
					batch := benchTask(b, 4, n, 1)
					if _, _, err := net.Gaussian(context.Background(), batch); err != nil {
						b.Fatal(err)
					}
					close(stop)
					peak = max(peak, <-res-base)
				}
				b.ReportMetric(float64(peak)/1e6, "peak-MB")
				b.ReportMetric(float64(PredictPeakBytes(net.cfg, 4, n))/1e6, "predicted-MB")
			})
		}
	}
}
