package cpu

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/afin-bench/afin/afin/arch"
)

// AvailableBytes is the memory this process can still use: the smaller
// of the kernel's MemAvailable and the headroom (limit minus usage) of
// every memory-limited cgroup the process sits in, or 0 when none of
// them can be read (not Linux): unknown. See AvailableBytesIn.
func AvailableBytes() int64 { return AvailableBytesIn(os.DirFS("/")) }

// AvailableBytesIn is AvailableBytes with the file system root given
// (paths inside it as "proc/meminfo"), so fixtures stand in for /proc
// and /sys in tests. The cgroups are the process's own
// (proc/self/cgroup), found where proc/self/mountinfo says their
// hierarchies are mounted: the cgroup v2 group and each of its ancestors
// up to the mount (memory.max and memory.current; "max" is no limit),
// and the cgroup v1 memory controller's group and its ancestors
// (memory.limit_in_bytes and memory.usage_in_bytes). A Slurm job's or a
// container's limit is one of these groups, not the mount's root.
func AvailableBytesIn(root fs.FS) int64 {
	avail := meminfoAvailable(root)
	if room, ok := cgroupHeadroom(root); ok && (avail == 0 || room < avail) {
		avail = max(room, 1)
	}
	return avail
}

func meminfoAvailable(root fs.FS) int64 {
	b, err := fs.ReadFile(root, "proc/meminfo")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		fields := strings.Fields(line)
		if len(fields) >= 2 && fields[0] == "MemAvailable:" {
			kb, err := strconv.ParseInt(fields[1], 10, 64)
			if err == nil {
				return kb * 1024
			}
		}
	}
	return 0
}

// Limit and usage files of the two cgroup versions' memory controllers.
var (
	cgroupV2 = cgroupFiles{limit: "memory.max", usage: "memory.current"}
	cgroupV1 = cgroupFiles{limit: "memory.limit_in_bytes", usage: "memory.usage_in_bytes"}
)

type cgroupFiles struct{ limit, usage string }

// cgroupHeadroom is the least headroom over the process's memory
// cgroups and their ancestors; ok is false when no limit was found.
// Without proc/self/cgroup it falls back to a v2 limit at
// sys/fs/cgroup itself (a container's namespaced view).
func cgroupHeadroom(root fs.FS) (room int64, ok bool) {
	groups := selfCgroups(root)
	if groups == nil {
		return groupHeadroom(root, "sys/fs/cgroup", cgroupV2)
	}
	mounts := cgroupMounts(root)
	for _, g := range groups {
		for _, m := range mounts {
			if m.v2 != g.v2 || (!m.v2 && !m.memory) {
				continue
			}
			dir, inside := m.dirOf(g.path)
			if !inside {
				continue
			}
			files := cgroupV1
			if g.v2 {
				files = cgroupV2
			}
			// Every group from the process's up to the mount limits it.
			for {
				if r, found := groupHeadroom(root, dir, files); found && (!ok || r < room) {
					room, ok = r, true
				}
				if dir == m.point {
					break
				}
				dir = path.Dir(dir)
			}
		}
	}
	return room, ok
}

// groupHeadroom is limit minus usage of the cgroup directory dir, found
// false when it has no limit (no file, "max", or a v1 limit so large it
// means none).
func groupHeadroom(root fs.FS, dir string, files cgroupFiles) (int64, bool) {
	read := func(name string) (int64, bool) {
		b, err := fs.ReadFile(root, path.Join(dir, name))
		if err != nil {
			return 0, false
		}
		v, err := strconv.ParseInt(string(bytes.TrimSpace(b)), 10, 64)
		return v, err == nil // "max" (no limit) does not parse
	}
	limit, okL := read(files.limit)
	used, okU := read(files.usage)
	// cgroup v1 writes "no limit" as the largest page-aligned int64.
	if !okL || !okU || limit >= 1<<62 {
		return 0, false
	}
	return limit - used, true
}

// cgroup is one line of /proc/self/cgroup that can limit memory: the
// v2 group ("0::/path") or the v1 memory controller's.
type cgroup struct {
	v2   bool
	path string
}

func selfCgroups(root fs.FS) []cgroup {
	b, err := fs.ReadFile(root, "proc/self/cgroup")
	if err != nil {
		return nil
	}
	var out []cgroup
	for line := range strings.Lines(string(b)) {
		id, rest, ok1 := strings.Cut(strings.TrimSpace(line), ":")
		ctrls, p, ok2 := strings.Cut(rest, ":")
		if !ok1 || !ok2 || !strings.HasPrefix(p, "/") {
			continue
		}
		switch {
		case id == "0" && ctrls == "":
			out = append(out, cgroup{v2: true, path: p})
		case slices.Contains(strings.Split(ctrls, ","), "memory"):
			out = append(out, cgroup{path: p})
		}
	}
	if out == nil {
		out = []cgroup{} // read, but nothing that limits memory
	}
	return out
}

// cgroupMount is a cgroup file system in proc/self/mountinfo: where it
// is mounted (point, relative to the root) and which group of the
// hierarchy its root is (a container sees its own group as the root).
type cgroupMount struct {
	v2, memory bool
	root       string
	point      string
}

// dirOf maps a group path of proc/self/cgroup to its directory under
// this mount; inside is false when the group is not visible there.
func (m cgroupMount) dirOf(group string) (dir string, inside bool) {
	rel, ok := strings.CutPrefix(group, m.root)
	if m.root == "/" {
		rel, ok = group, true
	}
	if !ok || (rel != "" && !strings.HasPrefix(rel, "/")) {
		return "", false
	}
	return path.Join(m.point, rel), true
}

func cgroupMounts(root fs.FS) []cgroupMount {
	b, err := fs.ReadFile(root, "proc/self/mountinfo")
	if err != nil {
		return nil
	}
	var out []cgroupMount
	for line := range strings.Lines(string(b)) {
		// ID parent major:minor root point options [optional...] - type source super-options
		pre, post, ok := strings.Cut(line, " - ")
		f, g := strings.Fields(pre), strings.Fields(post)
		if !ok || len(f) < 5 || len(g) < 3 {
			continue
		}
		m := cgroupMount{root: unescapeMount(f[3]), point: strings.TrimPrefix(path.Clean(unescapeMount(f[4])), "/")}
		switch g[0] {
		case "cgroup2":
			m.v2 = true
		case "cgroup":
			m.memory = slices.Contains(strings.Split(g[2], ","), "memory")
		default:
			continue
		}
		if m.point == "" {
			m.point = "."
		}
		out = append(out, m)
	}
	return out
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// ErrTooLarge marks a task whose forward pass would need more memory
// than the process has: bad input, refused before any work.
var ErrTooLarge = errors.New("task too large for the memory available")

// tooLarge is CheckMemory's refusal: one line with both numbers, and
// errors.Is(err, ErrTooLarge).
type tooLarge struct{ msg string }

func (e *tooLarge) Error() string        { return e.msg }
func (e *tooLarge) Is(target error) bool { return target == ErrTooLarge }

// CheckMemory returns an ErrTooLarge error, in one line with both
// numbers, when the predicted peak of a forward pass on a task of
// dimension d with n sites exceeds available (bytes; 0 means unknown and
// passes), so callers can refuse the task before any work, e.g.
// CheckMemory(cfg, d, n, AvailableBytes()).
func CheckMemory(cfg arch.Config, d, n int, available int64) error {
	return CheckBatchMemory(cfg, 1, d, n, available)
}

// CheckBatchMemory is CheckMemory for a batch of tasks tasks with up to
// n sites each.
func CheckBatchMemory(cfg arch.Config, tasks, d, n int, available int64) error {
	need := PredictBatchPeakBytes(cfg, tasks, d, n)
	if available > 0 && need > available {
		what := fmt.Sprintf("d=%d, N=%d", d, n)
		if tasks > 1 {
			what = fmt.Sprintf("%d tasks of d=%d, N ≤ %d", tasks, d, n)
		}
		return &tooLarge{fmt.Sprintf("afin %s forward on %s needs about %s, but only %s is available",
			cfg.Name, what, humanBytes(need), humanBytes(available))}
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
