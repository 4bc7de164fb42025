package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	root := filepath.Join("testdata", "src")
	tests := []struct {
		name  string
		max   int
		skip  []string
		want  []string // substrings of the lines, in order
		count int
	}{
		{"all within", 5, nil, nil, 0},
		{"limit between", 4, nil, []string{"sub.go:4: five is 5 lines (max 4)"}, 1},
		{"method named by receiver", 3, nil, []string{"short.go:9: (T).method is 4 lines (max 3)", "sub.go:4: five is 5 lines"}, 2},
		{"skipped directory", 3, []string{"sub"}, []string{"(T).method is 4 lines"}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			n, err := run(&out, root, tt.max, tt.skip)
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSpace(out.String()), "\n")
			if n != tt.count || (n > 0 && len(lines) != n) {
				t.Fatalf("found %d:\n%s\nwant %d", n, out.String(), tt.count)
			}
			for i, w := range tt.want {
				if !strings.Contains(lines[i], w) {
					t.Errorf("line %d = %q, want %q in it", i, lines[i], w)
				}
			}
		})
	}
}

// The module itself keeps the limit: the same check `go tool task lint`
// runs.
func TestModuleWithinLimit(t *testing.T) {
	var out bytes.Buffer
	n, err := run(&out, filepath.Join("..", ".."), 80, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n > 0 {
		t.Errorf("%d function(s) over 80 lines:\n%s", n, out.String())
	}
}
