//go:build xla

package gomlx

// The XLA/PJRT backend (CPU or CUDA plugins, loaded by absolute path from
// GOMLX_BACKEND=xla:/abs/path/plugin.so) needs cgo, so it is linked only
// into builds with the xla tag: `go build -tags xla ./cmd/afin`
// (deploy/gpu builds the GPU binary that way).

import (
	"strings"

	"github.com/gomlx/compute"
	"github.com/gomlx/go-xla/compute/xla"
	"github.com/gomlx/go-xla/pjrt"
)

// cudaBackend starts a CUDA plugin without its preallocated pool: by
// default the plugin takes 75% of the GPU when it starts, so the device's
// memory in use says nothing of what a program needs, and a second
// process on the GPU finds it full. Grown on demand, the pool's size is
// the run's peak. It reports false for any other backend.
func cudaBackend(cfg string) (compute.Backend, bool, error) {
	name, rest, ok := strings.Cut(cfg, ":")
	if !ok || (name != "xla" && name != "stablehlo" && name != "hlo" && name != "shlo") || !strings.Contains(strings.ToLower(rest), "cuda") {
		return nil, false, nil
	}
	b, err := xla.NewWithOptions(rest, pjrt.NamedValuesMap{"preallocate": false})
	if err != nil {
		return nil, true, err
	}
	return b, true, nil
}
