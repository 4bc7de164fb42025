package cpu

import (
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"
)

// TestAvailableBytesCgroups reads fixture roots (testdata/cgroup/NAME
// holds proc/ and sys/ as a Linux host shows them) and wants the
// headroom of the tightest memory cgroup the process sits in, or
// MemAvailable when that is smaller.
func TestAvailableBytesCgroups(t *testing.T) {
	const gib = 1 << 30
	cases := []struct {
		name string
		want int64
		why  string
	}{
		{"v1", 4*gib - 1*gib, "Slurm job step under the v1 memory controller: the job's group (an ancestor) holds the limit"},
		{"v1-container", gib - gib/4, "a container's v1 group mounted as the hierarchy's root"},
		{"v2-nested", 2*gib - 1610612736, "v2 scope two levels above the process is tighter than its own group"},
		{"v2-max", 6291456 * 1024, `every v2 level "max": MemAvailable decides`},
		{"hybrid", 3221225472 - 566267904, "v1 memory controller beside an empty unified v2 hierarchy"},
		{"v2-root-only", 1000000000, "no proc/self/cgroup: the v2 limit at the mount root"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := filepath.Join("testdata", "cgroup", c.name)
			if got := AvailableBytesIn(os.DirFS(root)); got != c.want {
				t.Errorf("%s: AvailableBytesIn = %d, want %d", c.why, got, c.want)
			}
		})
	}
	if got := AvailableBytesIn(fstest.MapFS{}); got != 0 {
		t.Errorf("nothing readable: %d, want 0 (unknown)", got)
	}
	over := fstest.MapFS{
		"proc/meminfo":                     {Data: []byte("MemAvailable: 1000 kB\n")},
		"proc/self/cgroup":                 {Data: []byte("0::/job\n")},
		"proc/self/mountinfo":              {Data: []byte("31 23 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n")},
		"sys/fs/cgroup/job/memory.max":     {Data: []byte("4096\n")},
		"sys/fs/cgroup/job/memory.current": {Data: []byte("8192\n")},
	}
	if got := AvailableBytesIn(over); got != 1 {
		t.Errorf("usage above the limit: %d, want 1 (nothing left, but known)", got)
	}
}

func TestUnescapeMount(t *testing.T) {
	if got := unescapeMount(`/mnt/my\040dir\134x`); got != `/mnt/my dir\x` {
		t.Errorf("got %q", got)
	}
}
