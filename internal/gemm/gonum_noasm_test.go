//go:build noasm

package gemm

// gonumPeer names gonum's Sgemm in benchmarks: -tags noasm builds it in
// pure Go, as it runs on every architecture but amd64.
const gonumPeer = "gonum-noasm"
