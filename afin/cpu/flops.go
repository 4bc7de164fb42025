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
	return encodingFLOPs(cfg, d, n, box) + mergeFLOPs(cfg, d, n, box) + gaussianDecoderFLOPs(cfg, d)
}
