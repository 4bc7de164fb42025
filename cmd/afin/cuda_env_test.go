package main

import (
	"maps"
	"testing"
)

func TestFullFloat32OnCUDA(t *testing.T) {
	plugin := "xla:/opt/venv/site-packages/jax_plugins/xla_cuda13/xla_cuda_plugin.so"
	cases := []struct {
		name    string
		backend string
		env     map[string]string
		want    map[string]string
	}{
		{"pure Go backend", "go", nil, nil},
		{"XLA CPU plugin", "xla:/x/pjrt_c_api_cpu_plugin.so", nil, nil},
		{"CUDA plugin, nothing set", plugin, nil,
			map[string]string{"NVIDIA_TF32_OVERRIDE": "0", "XLA_FLAGS": "--xla_gpu_enable_triton_gemm=false", "GOMLX_BACKEND": plugin + ",tf32=false"}},
		{"CUDA by name", "xla:cuda", nil,
			map[string]string{"NVIDIA_TF32_OVERRIDE": "0", "XLA_FLAGS": "--xla_gpu_enable_triton_gemm=false", "GOMLX_BACKEND": "xla:cuda,tf32=false"}},
		{"other XLA flags kept", plugin, map[string]string{"XLA_FLAGS": "--xla_dump_to=/tmp/d"},
			map[string]string{"NVIDIA_TF32_OVERRIDE": "0", "XLA_FLAGS": "--xla_dump_to=/tmp/d --xla_gpu_enable_triton_gemm=false", "GOMLX_BACKEND": plugin + ",tf32=false"}},
		{"the user's choices stand", plugin + ",tf32=true",
			map[string]string{"NVIDIA_TF32_OVERRIDE": "1", "XLA_FLAGS": "--xla_gpu_enable_triton_gemm=true"},
			map[string]string{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := fullFloat32OnCUDA(c.backend, func(k string) string { return c.env[k] })
			if len(got) != len(c.want) || (len(got) > 0 && !maps.Equal(got, c.want)) {
				t.Errorf("got %v, want %v", got, c.want)
			}
		})
	}
}
