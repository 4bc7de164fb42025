package cpu

import "github.com/afin-bench/afin/afin/arch"

// PredictPeakBytes bounds the resident memory of a process that runs one
// Gaussian forward pass of a task with dimension d and n likelihood
// sites: the input batch built by arch.NewBatch, this package's
// workspace (see the package documentation for the formula), the
// decoder's outputs and the float64 Gaussian made of them, the weights
// (a checkpoint's arrays and their packed copy) and processBytes for the
// Go runtime and the binary. It is an upper bound on the process's peak
// RSS (TestPeakRSSWithinEstimate in cmd/afin measures it), so callers can
// refuse a task whose prediction exceeds the memory available before
// doing any work.
func PredictPeakBytes(cfg arch.Config, d, n int) int64 {
	return PredictBatchPeakBytes(cfg, 1, d, n)
}

// PredictBatchPeakBytes is PredictPeakBytes for a batch of tasks tasks of
// dimension d with up to n sites each: the batch arrays and outputs grow
// with the tasks, the workspace (reused task by task) does not.
func PredictBatchPeakBytes(cfg arch.Config, tasks, d, n int) int64 {
	b := int64(tasks)
	return 4*(b*batchFloats(d, n)+workspaceFloats(cfg, d, n)) + gaussianOutputBytes(b, d) + weightBytes(cfg) + processBytes
}

// processBytes covers what a process holds besides the network and its
// buffers: the Go runtime, the binary's mapped code and data (the afin
// command links GoMLX), the task and the draws a method keeps. The
// afin binary's resident memory before any forward pass is about 40 MB.
const processBytes = 128 << 20

// weightBytes is the network's weights, twice: the checkpoint's arrays
// and the packed copy the kernels read (padded, hence the margin).
func weightBytes(cfg arch.Config) int64 {
	net, err := arch.New(cfg)
	if err != nil {
		return 0
	}
	p, _ := net.Count()
	return 4 * 3 * int64(p)
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

// workspaceFloats is the workspace at its largest: the sum of what each
// block's file says its buffers hold.
func workspaceFloats(cfg arch.Config, d, n int) int64 {
	return encodingWorkspaceFloats(cfg, d, n) + mergeWorkspaceFloats(cfg, d, n) +
		boxWorkspaceFloats(cfg, d) + mlpWorkspaceFloats(cfg, d) +
		poolingWorkspaceFloats(cfg, d) + gaussianDecoderWorkspaceFloats(cfg, d)
}

func roundUp(x, m int64) int64 { return (x + m - 1) / m * m }
