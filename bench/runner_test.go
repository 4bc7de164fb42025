package bench

import (
	"context"
	"testing"
	"time"
)

func TestRunSmokeNUTS(t *testing.T) {
	p, _ := GetProfile("smoke")
	dir := t.TempDir()
	start := time.Now()
	sum, err := Run(context.Background(), Config{Suite: "synthetic", Profile: p, Results: dir, Methods: []string{"nuts"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v in %v", sum, time.Since(start))
	recs, err := ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs[:6] {
		t.Logf("%s m1=%.3g m2=%.3g sw2=%.3g s=%.3g", r.Key(), r.M1, r.M2, r.SW2, r.Seconds)
	}
}
