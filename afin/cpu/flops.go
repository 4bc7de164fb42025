package cpu

import "github.com/afin-bench/afin/afin/arch"

// FLOPs is the floating-point operation count (2 per multiply-add) of
// the products of one forward pass with the Gaussian decoder on one task
// of dimension d with n likelihood sites, as this package computes it. It
// assumes a diag_gaussian prior and lin_gaussian sites (adapter widths
// differ slightly by family; the adapters are under 1% of the total).
// Element-wise work (SiLU, LayerNorm, softmax, summaries) is not counted.
//
// PyTorch's count for the same network is higher because it evaluates
// the first layer of every BoxMLP branch on the full 6C concatenation;
// UnfactorisedFLOPs gives that count.
func FLOPs(cfg arch.Config, d, n int) int64 {
	return flops(cfg, d, n, false)
}

// UnfactorisedFLOPs is FLOPs with every BoxMLP pair branch's first layer
// on the literal 6C concatenation, as the authors' PyTorch code runs it.
func UnfactorisedFLOPs(cfg arch.Config, d, n int) int64 {
	return flops(cfg, d, n, true)
}

// flops sums the blocks' own counts; box is one BoxMLP's count on the
// K = 1 + n tokens, factorised or not.
func flops(cfg arch.Config, d, n int, unfactorised bool) int64 {
	K := 1 + n
	box := func(h, l int) int64 {
		if unfactorised {
			return unfactorisedBoxFLOPs(K, d, cfg.C, h, l)
		}
		return boxFLOPs(K, d, cfg.C, h, l)
	}
	return encodingFLOPs(cfg, d, n, box) + mergeFLOPs(cfg, d, n, box, unfactorised) + gaussianDecoderFLOPs(cfg, d)
}

// forwardRates are forward-pass speeds, FLOPs (as FLOPs counts them) per
// CPU second of one core, for the large tasks a prediction matters for:
// the small config at d = 3, where factor-axis attention is over 90 % of
// the products. Measured with `afin infer --method afin --draws 0` on
// `afin simulate` tasks (bernoulli_logit), AFIN_GEMM set to the kernel,
// process CPU time less that of an N = 300 run, on a shared 2-core AMD
// EPYC with AVX2: avx2 31, 31 and 40 GFLOP/s at N = 3,000, 10,000 and
// 100,000; generic 2.3 at N = 3,000. That machine has no AVX-512: its
// rate is avx2's over 0.8, the AVX2/AVX-512 ratio BenchmarkForward
// measured on an AVX-512 EPYC (0.76–0.87, package doc). NEON was not
// measured: PredictSeconds takes the fastest rate there and says its
// figure is a lower bound. The paper config's wider products run faster,
// so these over-predict its time rather than under-predict it.
var forwardRates = map[string]float64{"avx512": 44e9, "avx2": 35e9, "generic": 2.3e9}

// PredictSeconds predicts the CPU seconds of one forward pass (one core,
// the matrix kernel named, e.g. gemm.Kernel()) on a task of dimension d
// with n sites: FLOPs at the kernel's measured rate. atLeast is true when
// the kernel's rate was not measured and the figure is a lower bound
// (FLOPs at the fastest rate measured). A loaded machine takes longer in
// wall-clock time.
func PredictSeconds(cfg arch.Config, d, n int, kernel string) (seconds float64, atLeast bool) {
	rate, ok := forwardRates[kernel]
	if !ok {
		for _, r := range forwardRates {
			rate = max(rate, r)
		}
	}
	return float64(FLOPs(cfg, d, n)) / rate, !ok
}
