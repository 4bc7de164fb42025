package reports

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/afin-bench/afin/records"
)

// The report names each run's matrix kernel in its provenance lines, and
// a banner (HTML, tables.md, terminal) says when AFIN ran natively on the
// generic kernel; records from before the kernel was recorded, or of
// methods without the network, or of another engine, raise no banner.
func TestKernelBanner(t *testing.T) {
	with := func(recs []records.Record, backend, kernel, features string, network bool) []records.Record {
		out := make([]records.Record, len(recs))
		for i, r := range recs {
			r.Provenance.Backend, r.Provenance.Kernel, r.Provenance.CPUFeatures = backend, kernel, features
			if network && strings.HasPrefix(r.Method, "afin") {
				r.Provenance.Checkpoint = "aaaaaaaaaaaaaaaa"
			}
			out[i] = r
		}
		return out
	}
	n := 0
	for _, r := range fakeRecords() {
		if strings.HasPrefix(r.Method, "afin") {
			n++
		}
	}
	for _, c := range []struct {
		name     string
		recs     []records.Record
		banner   []string // substrings of the banner; nil: no banner
		provLine string
	}{
		{"generic native", with(fakeRecords(), "native", "generic", "avx2,fma", true),
			[]string{"ran on the generic (portable Go) matrix kernel (CPU features: avx2,fma)", "do not compare with timings of avx512 runs"}, "kernel generic (CPU features avx2,fma)"},
		{"avx512 native", with(fakeRecords(), "native", "avx512", "avx512f,avx2,fma", true), nil, "kernel avx512 (CPU features avx512f,avx2,fma)"},
		{"generic, gomlx engine", with(fakeRecords(), "gomlx:cuda", "generic", "neon", true), nil, "kernel generic"},
		{"generic, no network", with(fakeRecords(), "native", "generic", "neon", false), nil, "kernel generic"},
		{"records before kernels", fakeRecords(), nil, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			rep, err := Build(c.recs)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			index, err := rep.WriteDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			page, _ := os.ReadFile(index)
			md, _ := os.ReadFile(filepath.Join(dir, "tables", "tables.md"))
			var term strings.Builder
			if err := rep.PrintTables(&term); err != nil {
				t.Fatal(err)
			}
			if c.banner == nil {
				if len(rep.Kernel) != 0 || strings.Contains(string(page), `id="kernel"`) {
					t.Errorf("unexpected banner %q", rep.Kernel)
				}
			} else {
				banner := strings.Join(rep.Kernel, " ")
				if !strings.HasPrefix(banner, fmt.Sprintf("%d of %d AFIN records", n, n)) {
					t.Errorf("banner %q does not count the %d AFIN records", banner, n)
				}
				for _, w := range c.banner {
					for where, text := range map[string]string{"banner": banner, "html": string(page), "tables.md": string(md), "terminal": term.String()} {
						if !strings.Contains(text, w) {
							t.Errorf("%s lacks %q", where, w)
						}
					}
				}
				if !strings.Contains(string(page), `<div class="banner" id="kernel">`) {
					t.Error("html has no kernel banner")
				}
			}
			prov := strings.Join(rep.Provenance, "\n")
			if c.provLine == "" && strings.Contains(prov, "kernel") || c.provLine != "" && !strings.Contains(prov, c.provLine) {
				t.Errorf("provenance %q, want %q", prov, c.provLine)
			}
		})
	}
}
