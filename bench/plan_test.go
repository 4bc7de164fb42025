package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/afin-bench/afin/methods"
	"github.com/afin-bench/afin/records"
)

// A run writes its whole plan beside the results, so the records layer
// can tell a finished directory from one with a record deleted or a shard
// missing (report and check print records.Loaded.Incomplete).
func TestRunWritesPlan(t *testing.T) {
	factory := func(name string, _ *methods.Env) (methods.Method, error) {
		if name != "nuts" && name != "frvi" {
			return nil, fmt.Errorf("%w: not faked", methods.ErrUnavailable)
		}
		return fakeMethod{name: name}, nil
	}
	incomplete := func(t *testing.T, dir string) []string {
		t.Helper()
		l, err := records.Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(l.Plans) != 1 {
			t.Fatalf("%d plans in %s, want 1", len(l.Plans), dir)
		}
		return l.Incomplete()
	}

	full := t.TempDir()
	if _, err := Run(context.Background(), fakeConfig(full, factory)); err != nil {
		t.Fatal(err)
	}
	if got := incomplete(t, full); len(got) != 0 {
		t.Fatalf("a finished run reads as %q", got)
	}
	// One record (the first line) deleted.
	path := filepath.Join(full, "synthetic.jsonl")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, rest, _ := strings.Cut(string(data), "\n")
	if err := os.WriteFile(path, []byte(rest), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := incomplete(t, full); len(got) != 1 || !strings.HasPrefix(got[0], "incomplete: 191 of 192 units (suite synthetic, profile smoke)") || !strings.Contains(got[0], "(1 of 2 points)") {
		t.Errorf("a record deleted: %q", got)
	}

	// Only shard 0 of a 2-shard plan, then both.
	sharded := t.TempDir()
	for i := range 2 {
		cfg := fakeConfig(sharded, factory)
		cfg.Shard, cfg.Shards = i, 2
		if _, err := Run(context.Background(), cfg); err != nil {
			t.Fatal(err)
		}
		got := incomplete(t, sharded)
		switch i {
		case 0:
			if len(got) != 1 || !strings.Contains(got[0], "of 192 units (suite synthetic, profile smoke, 2 shards); no record of shard(s) 1") || strings.HasPrefix(got[0], "incomplete: 192 ") {
				t.Errorf("one shard of 2: %q", got)
			}
		case 1:
			if len(got) != 0 {
				t.Errorf("both shards: %q", got)
			}
		}
	}
}
