package posterior

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// gpdLogDraws returns log x for n draws x ~ GPD(k, σ=1, μ=0), by inversion:
// x = ((1−U)^(−k) − 1)/k.
func gpdLogDraws(rng *rand.Rand, n int, k float64) []float64 {
	lw := make([]float64, n)
	for i := range lw {
		u := rng.Float64()
		lw[i] = math.Log(math.Expm1(-k*math.Log1p(-u)) / k)
	}
	return lw
}

// TestParetoKRecoversGPDShape: for ratios drawn from a GPD with shape k,
// exceedances over any threshold are again GPD(k), so k̂ estimates k. With
// S = 10⁵ the tail holds 949 draws and k̂'s standard error is about
// (1+k)/√949 ≈ 0.04–0.07; the mean over 16 independent replicates (standard
// error ≤ 0.02) must be within ±0.05 of k.
func TestParetoKRecoversGPDShape(t *testing.T) {
	const s, reps = 100000, 16
	if testing.Short() {
		t.Skip("-short: draws 6.4e6 GPD variates")
	}
	for _, k := range []float64{0.2, 0.5, 0.8, 1.2} {
		var sum, sum2 float64
		for r := range reps {
			kh := ParetoK(gpdLogDraws(rand.New(rand.NewPCG(uint64(r), math.Float64bits(k))), s, k))
			sum += kh
			sum2 += kh * kh
		}
		mean := sum / reps
		sd := math.Sqrt((sum2 - reps*mean*mean) / (reps - 1))
		t.Logf("k=%.1f: mean k̂ %.4f, sd over replicates %.4f", k, mean, sd)
		if math.Abs(mean-k) > 0.05 {
			t.Errorf("k=%.1f: mean k̂ = %.4f, want within ±0.05", k, mean)
		}
	}
}

func TestParetoKEdgeCases(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 31))
	small := gpdLogDraws(rng, 20, 0.5) // tail ⌈min(4, 13.4)⌉ = 4 < 5
	constant := make([]float64, 1000)
	withDead := gpdLogDraws(rng, 2000, 0.5)
	for i := 0; i < len(withDead); i += 2 {
		withDead[i] = math.Inf(-1)
	}
	mostlyDead := make([]float64, 1000)
	for i := range mostlyDead {
		mostlyDead[i] = math.Inf(-1)
	}
	mostlyDead[7], mostlyDead[500], mostlyDead[900] = 0, 0.5, -1
	cases := []struct {
		name  string
		logW  []float64
		check func(float64) bool
	}{
		// 3 live draws cannot fill a tail of 95: no trustworthy fit.
		{"mostly dead", mostlyDead, func(k float64) bool { return math.IsInf(k, 1) }},
		{"too few draws", small, func(k float64) bool { return math.IsInf(k, 1) }},
		{"constant tail", constant, func(k float64) bool { return math.IsInf(k, 1) }},
		{"NaN entry", []float64{0, math.NaN(), 1}, math.IsNaN},
		{"+Inf entry", []float64{0, math.Inf(1), 1}, math.IsNaN},
		{"all zero ratios", []float64{math.Inf(-1), math.Inf(-1)}, math.IsNaN},
		{"empty", nil, math.IsNaN},
		// Half the ratios are zero; the tail (2000 draws → 135) lies in
		// the live half, which is GPD(0.5).
		{"dead draws", withDead, func(k float64) bool { return math.Abs(k-0.5) < 0.25 }},
	}
	for _, c := range cases {
		if k := ParetoK(c.logW); !c.check(k) {
			t.Errorf("%s: k̂ = %v", c.name, k)
		}
	}
	if n := PSISTailLen(100000); n != 949 {
		t.Errorf("PSISTailLen(1e5) = %d, want 949", n)
	}
	if n := PSISTailLen(100); n != 20 {
		t.Errorf("PSISTailLen(100) = %d, want 20", n)
	}
}

// TestParetoKInvariances: k̂ ignores the order of the draws and a common
// shift of the log ratios (an unnormalised target).
func TestParetoKInvariances(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 32))
	lw := gpdLogDraws(rng, 5000, 0.7)
	k := ParetoK(lw)
	shifted := make([]float64, len(lw))
	for i, v := range lw {
		shifted[i] = v + 300
	}
	perm := slices.Clone(lw)
	rng.Shuffle(len(perm), func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
	if ks := ParetoK(shifted); math.Abs(ks-k) > 1e-9 {
		t.Errorf("shift changed k̂: %v → %v", k, ks)
	}
	if kp := ParetoK(perm); kp != k {
		t.Errorf("permutation changed k̂: %v → %v", k, kp)
	}
	_, kpsis, err := PSIS(lw)
	if err != nil || kpsis != k {
		t.Errorf("PSIS k̂ = %v (err %v), ParetoK = %v", kpsis, err, k)
	}
}

// TestPSISSmoothing: smoothed weights are normalised, untouched below the
// tail, and capped at the largest raw ratio.
func TestPSISSmoothing(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 33))
	raw := gpdLogDraws(rng, 3000, 0.6)
	lw, k, err := PSIS(raw)
	if err != nil {
		t.Fatal(err)
	}
	m := PSISTailLen(len(raw))
	order := make([]int, len(raw))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmpFloat(raw[a], raw[b]) })
	var sum float64
	for _, v := range lw {
		sum += math.Exp(v)
	}
	if math.Abs(sum-1) > 1e-12 {
		t.Errorf("smoothed weights sum to %v", sum)
	}
	// Below the tail, smoothed − raw is one constant (the normaliser).
	c := lw[order[0]] - raw[order[0]]
	for _, i := range order[:len(raw)-m] {
		if math.Abs(lw[i]-raw[i]-c) > 1e-12 {
			t.Fatalf("non-tail weight %d changed", i)
		}
	}
	maxRaw := slices.Max(raw)
	for _, i := range order[len(raw)-m:] {
		if lw[i]-c > maxRaw+1e-12 {
			t.Errorf("tail weight %d above the largest raw ratio", i)
		}
	}
	if !(k > 0.3 && k < 0.9) {
		t.Errorf("k̂ = %v for GPD(0.6) ratios", k)
	}
}

func TestSelectKth(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 34))
	for _, n := range []int{1, 2, 3, 10, 1000} {
		for _, ties := range []bool{false, true} {
			v := make([]float64, n)
			for i := range v {
				v[i] = rng.NormFloat64()
				if ties {
					v[i] = math.Round(v[i])
				}
			}
			sorted := slices.Clone(v)
			slices.Sort(sorted)
			for _, k := range []int{0, n / 2, n - 1} {
				a := slices.Clone(v)
				selectKth(a, k)
				if a[k] != sorted[k] {
					t.Fatalf("n=%d ties=%v k=%d: got %v, want %v", n, ties, k, a[k], sorted[k])
				}
				for i := range a {
					if (i < k && a[i] > a[k]) || (i > k && a[i] < a[k]) {
						t.Fatalf("n=%d k=%d: not partitioned at %d", n, k, i)
					}
				}
			}
		}
	}
}

func TestGPDFitClosedFormCases(t *testing.T) {
	// Exponential exceedances (k = 0, σ = 2) — k̂ near the prior-shrunk 0,
	// σ̂ near 2 with 5000 draws.
	rng := rand.New(rand.NewPCG(5, 35))
	x := make([]float64, 5000)
	for i := range x {
		x[i] = 2 * rng.ExpFloat64()
	}
	slices.Sort(x)
	k, sigma := GPDFit(x)
	if math.Abs(k) > 0.05 || math.Abs(sigma-2) > 0.15 {
		t.Errorf("exponential: k̂ = %.4f, σ̂ = %.4f, want ≈ 0, 2", k, sigma)
	}
	// Uniform(0, 1) exceedances are GPD with k = −1, σ = 1.
	for i := range x {
		x[i] = rng.Float64()
	}
	slices.Sort(x)
	if k, sigma := GPDFit(x); math.Abs(k+1) > 0.05 || math.Abs(sigma-1) > 0.05 {
		t.Errorf("uniform: k̂ = %.4f, σ̂ = %.4f, want ≈ −1, 1", k, sigma)
	}
}

func TestRadixSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 36))
	special := []float64{math.Inf(-1), math.Inf(1), 0, math.Copysign(0, -1), math.SmallestNonzeroFloat64, -math.MaxFloat64, 1, -1}
	// n = 1000: many ties, few distinct bytes. n = 3000 and 3001: values
	// that share their keys' upper 32 bits in runs longer than shortRun
	// (finished by the lower byte passes) and shorter (by insertion).
	for _, n := range []int{0, 1, 2, 7, 1000, 3000, 3001, 5000} {
		keys := make([]uint64, n)
		vals := make([]float64, n)
		payload := make([]float64, n)
		for i := range keys {
			v := rng.NormFloat64() * math.Pow(10, float64(rng.IntN(20)-10))
			if i < len(special) && n > 10 {
				v = special[i]
			}
			switch n {
			case 1000:
				v = math.Round(v)
			case 3000:
				v = float64(1+rng.IntN(3)) + float64(rng.IntN(1<<20))*0x1p-52
			case 3001:
				v = float64(1+rng.IntN(1000)) + float64(rng.IntN(1<<20))*0x1p-52
			}
			vals[i] = v
			keys[i] = orderedKey(v)
			payload[i] = float64(i)
		}
		radixSort(keys, make([]uint64, n), payload, make([]float64, n))
		want := slices.Clone(vals)
		slices.Sort(want)
		for i := range keys {
			got := keyValue(keys[i])
			if got != want[i] {
				t.Fatalf("n=%d: position %d holds %v, want %v", n, i, got, want[i])
			}
			if vals[int(payload[i])] != got || math.Signbit(vals[int(payload[i])]) != math.Signbit(got) {
				t.Fatalf("n=%d: payload not carried at %d", n, i)
			}
			if i > 0 && keys[i] == keys[i-1] && payload[i] < payload[i-1] {
				t.Fatalf("n=%d: not stable at %d", n, i)
			}
		}
	}
}

// TestParetoKMLERecoversGPDShape: the unpenalised MLE also recovers the
// shape (tail of 949 draws at S = 10⁵; mean of 16 replicates), including a
// light tail that the loo estimator's prior would pull towards 0.5.
func TestParetoKMLERecoversGPDShape(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: draws 8e6 GPD variates")
	}
	const s, reps = 100000, 16
	for _, k := range []float64{-0.3, 0.2, 0.5, 0.8, 1.2} {
		var sum float64
		for r := range reps {
			sum += ParetoKMLE(gpdLogDraws(rand.New(rand.NewPCG(uint64(r), 77)), s, k))
		}
		if mean := sum / reps; math.Abs(mean-k) > 0.05 {
			t.Errorf("k=%.1f: mean MLE k̂ = %.4f", k, mean)
		} else {
			t.Logf("k=%.1f: mean MLE k̂ = %.4f", k, mean)
		}
	}
}

func TestParetoKMLEEdgeCases(t *testing.T) {
	cases := []struct {
		name string
		logW []float64
		want func(float64) bool
	}{
		{"fewer than 10 finite", []float64{1, 2, 3, math.NaN(), math.Inf(1), 0, 1, 2, 3, 4}, math.IsNaN},
		{"constant", make([]float64, 50), func(k float64) bool { return k == 0 }},
		// Uniform weights: the exceedances are uniform, a GPD with k = −1,
		// at the edge of where an interior MLE exists; the MLE or the
		// moment fallback must land near −1.
		{"uniform", func() []float64 {
			rng := rand.New(rand.NewPCG(9, 9))
			v := make([]float64, 5000)
			for i := range v {
				v[i] = math.Log(rng.Float64())
			}
			return v
		}(), func(k float64) bool { return math.Abs(k+1) < 0.2 }},
	}
	for _, c := range cases {
		if k := ParetoKMLE(c.logW); !c.want(k) {
			t.Errorf("%s: k̂ = %v", c.name, k)
		}
	}
}

// MinParetoKDraws is the fewest draws whose tail is long enough for a
// fit: below it k̂ is +Inf whatever the ratios, from it a fit is made.
func TestMinParetoKDraws(t *testing.T) {
	if PSISTailLen(MinParetoKDraws) < minTail || PSISTailLen(MinParetoKDraws-1) >= minTail {
		t.Fatalf("tail %d at %d draws, %d at %d; want the first with ≥ %d", PSISTailLen(MinParetoKDraws), MinParetoKDraws,
			PSISTailLen(MinParetoKDraws-1), MinParetoKDraws-1, minTail)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	lw := make([]float64, MinParetoKDraws)
	for i := range lw {
		lw[i] = rng.NormFloat64()
	}
	if k := ParetoK(lw); math.IsInf(k, 0) || math.IsNaN(k) {
		t.Errorf("k̂ at %d draws: %v, want a finite fit", MinParetoKDraws, k)
	}
	if k := ParetoK(lw[:MinParetoKDraws-1]); !math.IsInf(k, 1) {
		t.Errorf("k̂ at %d draws: %v, want +Inf", MinParetoKDraws-1, k)
	}
}
