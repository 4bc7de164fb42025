//go:build !noasm

package gemm

// gonumPeer names gonum's Sgemm in benchmarks: with its assembly (SSE
// on amd64), the build's default.
const gonumPeer = "gonum"
