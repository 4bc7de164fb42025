//go:build !(amd64 || arm64) || purego

package gemm

import "runtime"

// rowBlock rows of C are finished (product, bias, activation) before the
// next rows start, so the activation pass finds them in L1.
const rowBlock = 48

// archImpls: this build has no assembly kernels.
func archImpls() []*impl { return nil }

func cpuFeatures() string { return runtime.GOARCH + ": no assembly kernels in this build" }
