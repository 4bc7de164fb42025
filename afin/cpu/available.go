package cpu

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/afin-bench/afin/afin/arch"
)

// AvailableBytes is the memory this process can still use: the smaller
// of the kernel's MemAvailable and the cgroup v2 limit's headroom, or 0
// when neither can be read (not Linux): unknown.
func AvailableBytes() int64 {
	avail := meminfoAvailable()
	if lim, used, ok := cgroupHeadroom(); ok {
		if room := lim - used; avail == 0 || room < avail {
			avail = max(room, 1)
		}
	}
	return avail
}

func meminfoAvailable() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemAvailable:" {
			kb, err := strconv.ParseInt(fields[1], 10, 64)
			if err == nil {
				return kb * 1024
			}
		}
	}
	return 0
}

func cgroupHeadroom() (limit, used int64, ok bool) {
	read := func(name string) (int64, bool) {
		b, err := os.ReadFile("/sys/fs/cgroup/" + name)
		if err != nil {
			return 0, false
		}
		v, err := strconv.ParseInt(string(bytes.TrimSpace(b)), 10, 64)
		return v, err == nil // "max" (no limit) does not parse
	}
	limit, okL := read("memory.max")
	used, okU := read("memory.current")
	return limit, used, okL && okU
}

// CheckMemory returns an error, in one line with both numbers, when the
// predicted peak of a forward pass on a task of dimension d with n sites
// exceeds available (bytes; 0 means unknown and passes), so callers can
// refuse the task before any work, e.g. CheckMemory(cfg, d, n,
// AvailableBytes()).
func CheckMemory(cfg arch.Config, d, n int, available int64) error {
	need := PredictPeakBytes(cfg, d, n)
	if available > 0 && need > available {
		return fmt.Errorf("afin %s forward on d=%d, N=%d needs about %s, but only %s is available",
			cfg.Name, d, n, humanBytes(need), humanBytes(available))
	}
	return nil
}

func humanBytes(b int64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
	}
	return fmt.Sprintf("%d KiB", (b+1023)/1024)
}
