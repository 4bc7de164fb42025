package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestMetricsC2ST: --c2st adds the classifier test to the JSON, reading
// near 0.5 for two samples of one distribution and near 1 for disjoint
// ones; without the flag the key is absent.
func TestMetricsC2ST(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(5, 6))
	csv := func(shift float64) string {
		var b strings.Builder
		b.WriteString("z1,z2\n")
		for range 200 {
			fmt.Fprintf(&b, "%g,%g\n", rng.NormFloat64()+shift, rng.NormFloat64())
		}
		return b.String()
	}
	ref := mtFile(t, dir, "ref.csv", csv(0))
	for _, tc := range []struct {
		name   string
		shift  float64
		lo, hi float64
	}{{"same", 0, 0.4, 0.6}, {"disjoint", 20, 0.99, 1}} {
		q := mtFile(t, dir, tc.name+".csv", csv(tc.shift))
		code, out, errs := mtRun(t, "--draws", q, "--ref", ref, "--c2st", "--json")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", tc.name, code, errs)
		}
		var got struct {
			C2ST *struct {
				Accuracy float64 `json:"accuracy"`
				N        int     `json:"n"`
			} `json:"c2st"`
		}
		if err := json.Unmarshal([]byte(out), &got); err != nil || got.C2ST == nil {
			t.Fatalf("%s: output %q: %v", tc.name, out, err)
		}
		if a := got.C2ST.Accuracy; a < tc.lo || a > tc.hi || got.C2ST.N != 200 {
			t.Errorf("%s: accuracy %.3f (n=%d), want in [%v, %v]", tc.name, a, got.C2ST.N, tc.lo, tc.hi)
		}
	}
	_, out, _ := mtRun(t, "--draws", ref, "--ref", ref, "--json")
	if strings.Contains(out, "c2st") {
		t.Errorf("c2st present without --c2st: %s", out)
	}
}
