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
// CPU second of one core, measured per matrix kernel on the small config
// at d = 3 with N = 3,000 to 10,000 sites, where factor-axis attention is
// over 90 % of the products (`afin infer --method afin` on `afin simulate`
// tasks, AFIN_GEMM set to each kernel, process CPU time; shared AMD EPYC
// with AVX-512). The paper config's wider products run faster, so these
// over-predict its time rather than under-predict it. NEON was not
// measured: PredictSeconds takes the fastest rate there and says its
// figure is a lower bound.
var forwardRates = map[string]float64{"avx512": 31e9, "avx2": 25e9, "generic": 3.5e9}

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
