package bench

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/afin-bench/afin/factor"
	"github.com/afin-bench/afin/reference"
)

func TestZZProbe(t *testing.T) {
	p, _ := GetProfile("quick")
	for _, s := range externalSettings() {
		task, err := ExternalTask(s, 0)
		if err != nil {
			t.Fatal(err)
		}
		if factor.IsConjugate(task) {
			m, c, _ := factor.ExactPosterior(task)
			sd := make([]float64, task.D)
			for i := range sd { sd[i] = math.Sqrt(c[i*task.D+i]) }
			fmt.Printf("%s exact mean %.4g sd %.3g\n", s.Key, m, sd)
			continue
		}
		st := externalReferenceSettings(p)
		st.CacheDir = "/tmp/ext/cache"
		t0 := time.Now()
		ref, err := reference.Get(context.Background(), task, st)
		if err != nil {
			fmt.Printf("%s ERR %v\n", s.Key, err)
		}
		if ref != nil {
			sd := make([]float64, task.D)
			for i := range sd { sd[i] = math.Sqrt(ref.Cov[i*task.D+i]) }
			fmt.Printf("%s nuts %.1fs rhat %.4f ess %.0f div %d mean %.4g sd %.3g truth %.3g\n", s.Key, time.Since(t0).Seconds(), ref.Diagnostics.MaxRhat, ref.Diagnostics.MinESSBulk, ref.Diagnostics.Divergences, ref.Mean, sd, task.TrueZ)
		}
	}
}
