//go:build xla

package gomlx

// The XLA/PJRT backend (CPU or CUDA plugins, loaded by absolute path from
// GOMLX_BACKEND=xla:/abs/path/plugin.so) needs cgo, so it is linked only
// into builds with the xla tag: `go build -tags xla ./cmd/afin`
// (deploy/gpu builds the GPU binary that way).
import _ "github.com/gomlx/gomlx/backends/xla"
