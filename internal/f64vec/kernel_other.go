//go:build !amd64 || purego

package f64vec

// archImpls: this build has no assembly kernels.
func archImpls() []*impl { return nil }
