// Package cpu is AFIN's forward pass in plain Go over the architecture
// declared in package arch and the AVX-512 matrix kernel of
// internal/gemm; GoMLX stays the training and GPU path.
package cpu
