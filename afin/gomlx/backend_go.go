//go:build !xla

package gomlx

import "github.com/gomlx/gomlx/backends"

// cudaBackend: builds without the xla tag have no CUDA backend (see
// backend_xla.go).
func cudaBackend(string) (backends.Backend, bool, error) { return nil, false, nil }
