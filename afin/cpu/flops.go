package cpu

import "github.com/afin-bench/afin/afin/arch"

// mlpFLOPs is 2·rows·(multiply-adds) of MLP(in, out, h, l).
func mlpFLOPs(rows, in, out, h, l int) int64 {
	if l == 1 {
		return 2 * int64(rows) * int64(in*out)
	}
	return 2 * int64(rows) * int64(in*h+(l-2)*h*h+h*out)
}

// boxFLOPs counts one BoxMLP on K tokens as this package evaluates it:
// the node branch on 6C inputs, the factorised pair branch (C inputs per
// (i,j) plus the per-i and per-j parts U and V on 3C and 2C inputs).
func boxFLOPs(K, d, c, h, l int) int64 {
	node := mlpFLOPs(K*d, 6*c, c, h, l)
	uv := 2 * int64(K*d) * int64(5*c*h)
	pair := mlpFLOPs(K*d*d, c, c, h, l)
	return node + uv + pair
}

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

func flops(cfg arch.Config, d, n int, unfactorised bool) int64 {
	K := 1 + n
	c := cfg.C
	box := func(h, l int) int64 {
		if unfactorised {
			return mlpFLOPs(K*d, 6*c, c, h, l) + mlpFLOPs(K*d*d, 6*c, c, h, l)
		}
		return boxFLOPs(K, d, c, h, l)
	}
	pn, pp := arch.PriorNodeWidth[0], arch.PriorPairWidth[0]
	ln, lp := arch.LikNodeWidth[0], arch.LikPairWidth[0]
	ah, al := cfg.AdapterH, cfg.AdapterL
	f := mlpFLOPs(d, pn, c, ah, al) + mlpFLOPs(d*d, pp, c, ah, al) +
		mlpFLOPs(n*d, ln, c, ah, al) + mlpFLOPs(n*d*d, lp, c, ah, al)
	f += int64(cfg.EncLayers) * box(cfg.BoxH, cfg.BoxL)
	attn := 4 * int64(K) * int64(K) * int64((d+d*d)*c) // Q·Kᵀ and A·V over all heads
	f += int64(cfg.Blocks) * (5*box(cfg.MergeH, cfg.MergeL) + attn)
	f += mlpFLOPs(d*d, c, 1, cfg.DecH, cfg.DecL) + mlpFLOPs(d, c, 1, cfg.DecH, cfg.DecL) +
		mlpFLOPs(d, 5*c, 1, cfg.DecH, cfg.DecL)
	return f
}
