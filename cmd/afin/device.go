package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"strings"
)

// isCUDA reports whether a GOMLX_BACKEND value names an XLA CUDA plugin.
func isCUDA(backend string) bool {
	return strings.HasPrefix(backend, "xla") && strings.Contains(strings.ToLower(backend), "cuda")
}

// lowPrecisionTraining reports whether the command line is `afin train`
// asking for tf32 or bf16: then XLA keeps its fast matrix products (see
// fullFloat32OnCUDA), which the process environment must say before the
// backend starts.
func lowPrecisionTraining(args []string) bool {
	if len(args) == 0 || args[0] != "train" {
		return false
	}
	for i, a := range args {
		v, ok := strings.CutPrefix(strings.TrimLeft(a, "-"), "precision")
		if !ok || !strings.HasPrefix(a, "-") {
			continue
		}
		switch {
		case strings.HasPrefix(v, "="):
			v = v[1:]
		case v == "" && i+1 < len(args):
			v = args[i+1]
		default:
			continue
		}
		return v == "tf32" || v == "bf16"
	}
	return false
}

// defaultMemoryBudget is the modelled memory a GoMLX program run is
// planned to fit: 20% of the first GPU's memory on a CUDA backend, half
// the host's available memory otherwise; 0 (no plan) when neither can be
// read. On the GPU the model runs low: on an H100 a paper-config forward
// the model put at 6,384 MiB peaked at 18,069 MiB (deploy/gpu/results),
// so 20% modelled is about 60% of the device.
func defaultMemoryBudget(backend string) int64 {
	if isCUDA(backend) {
		out, err := exec.Command("nvidia-smi", "--query-gpu=memory.total", "--format=csv,noheader,nounits").Output()
		if err != nil {
			return 0
		}
		mib, err := strconv.ParseFloat(strings.TrimSpace(strings.SplitN(string(out), "\n", 2)[0]), 64)
		if err != nil {
			return 0
		}
		return int64(0.2 * mib * (1 << 20))
	}
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && f[0] == "MemAvailable:" {
			kib, err := strconv.ParseInt(f[1], 10, 64)
			if err == nil {
				return kib << 10 / 2
			}
		}
	}
	return 0
}
