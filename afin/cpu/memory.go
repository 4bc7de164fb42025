package cpu

import "github.com/afin-bench/afin/afin/arch"

// PredictPeakBytes is the memory one Gaussian forward pass of a task
// with dimension d and n likelihood sites holds at its peak: the input
// batch built by arch.NewBatch plus this package's workspace (see the
// package documentation for the formula). Callers can refuse a task whose
// prediction exceeds the memory available before doing any work.
func PredictPeakBytes(cfg arch.Config, d, n int) int64 {
	return 4 * (batchFloats(d, n) + workspaceFloats(cfg, d, n))
}

// batchFloats counts arch.NewBatch's arrays for one task: every family's
// node and pair descriptors are allocated for every site.
func batchFloats(d, n int) int64 {
	var sn, sp, pn, pp int
	for f := range arch.LikFamilies {
		sn, sp = sn+arch.LikNodeWidth[f], sp+arch.LikPairWidth[f]
	}
	for f := range arch.PriorFamilies {
		pn, pp = pn+arch.PriorNodeWidth[f], pp+arch.PriorPairWidth[f]
	}
	nl := len(arch.LikFamilies)
	return int64(n)*int64(d*sn+d*d*sp+nl) + int64(d*pn+d*d*pp+len(arch.PriorFamilies))
}

// workspaceFloats mirrors the buffers of workspace at their largest.
func workspaceFloats(cfg arch.Config, d, n int) int64 {
	K := int64(1 + n)
	c, h := int64(cfg.C), int64(cfg.Heads)
	dd := int64(d)
	t := K * (dd + dd*dd) * c // one full set of node+pair tokens
	// Tokens, mixed attention output, and head-major Q, K, V.
	f := 5 * t
	// One head's packed keys and values: a copy plus panels padded to 16.
	D := (dd + dd*dd) * (c / h)
	kb := min(K, int64(keyBlock))
	f += 2*K*D + D*((K+kb-1)/kb)*roundUp(kb, 16) + K*roundUp(D, 16)
	// One query chunk's scores (against one key block) and outputs.
	bq := min(K, queryChunk, max(1, attendTileMACs/(kb*D)))
	f += bq*kb + bq*D + 2*bq
	// BoxMLP chunk buffers (tc tokens), the hidden activations included.
	tc := int64(tokensPerChunk(d))
	hid := int64(max(cfg.BoxH, cfg.MergeH, cfg.AdapterH, cfg.DecH))
	rows := max(tc*dd*dd, mlpRows)
	f += 2*tc*(dd+dd*dd)*c + tc*dd*c*(3+6+5) + 2*tc*c + 2*tc*dd*hid + 2*rows*hid
	// Pooled tokens and decoder buffers.
	f += (dd+dd*dd)*c + dd*5*c + dd*dd + 2*dd
	return f
}

func roundUp(x, m int64) int64 { return (x + m - 1) / m * m }
