package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// testdata/gotest.json is `go test -json ./...` over four packages: a
// holds a top-level skip (with a log line before it), a parallel
// subtest's skip and passing tests; b a failing test; c no test files; d
// does not build.
func TestScan(t *testing.T) {
	f, err := os.Open("testdata/gotest.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out bytes.Buffer
	sum, err := scan(f, &out)
	if err != nil {
		t.Fatal(err)
	}
	want := []skip{
		{"example.com/sk/a", "TestSkipped", "a_test.go:5: some log a_test.go:5: -long not set: long validation"},
		{"example.com/sk/a", "TestSub/x_y", "a_test.go:7: fixture q absent"},
	}
	if len(sum.skips) != len(want) {
		t.Fatalf("skips %+v, want %+v", sum.skips, want)
	}
	for i := range want {
		if sum.skips[i] != want[i] {
			t.Errorf("skip %d = %+v, want %+v", i, sum.skips[i], want[i])
		}
	}
	if got := strings.Join(sum.failed, " "); got != "example.com/sk/d example.com/sk/b" {
		t.Errorf("failed packages %q", got)
	}
	text := out.String()
	for _, s := range []string{
		"ok  \texample.com/sk/a\t0.061s\n",
		"?   \texample.com/sk/c\t[no test files]\n",
		"d/d.go:2:12: undefined: undefined\n",
		"    b_test.go:5: boom\n--- FAIL: TestFail",
		"FAIL\texample.com/sk/b\t0.272s\n",
	} {
		if !strings.Contains(text, s) {
			t.Errorf("output lacks %q:\n%s", s, text)
		}
	}
	if strings.Contains(text, "=== RUN   TestOK") {
		t.Errorf("a passing package's test output printed:\n%s", text)
	}
}

func TestReport(t *testing.T) {
	skips := []skip{
		{"p", "TestLong", "x_test.go:3: -long not set: long validation"},
		{"p", "TestPaper", "x_test.go:9: paper source absent (set AFIN_PAPER_TEX)"},
		{"q", "TestFixture/sub", "fixtures absent"},
	}
	list := `# comment
always p TestLong   -long not set
local  p *          paper source absent
always q TestOther  fixtures absent
`
	for _, c := range []struct {
		name   string
		ci     bool
		skips  []skip
		failed []string
		ok     bool
		notOK  int
	}{
		{"all allowed locally", false, skips[:2], nil, true, 0},
		{"local rule off under -ci", true, skips[:2], nil, false, 1},
		{"rule for another test", false, skips[2:], nil, false, 1},
		{"failed package", false, nil, []string{"r"}, false, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			rules, err := parseAllow(strings.NewReader(list), c.ci)
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			ok := report(&out, &summary{skips: append([]skip(nil), c.skips...), failed: c.failed}, rules)
			if ok != c.ok || strings.Count(out.String(), "NOT ALLOWED") != c.notOK {
				t.Errorf("ok %v, want %v:\n%s", ok, c.ok, out.String())
			}
		})
	}
}

func TestParseAllowErrors(t *testing.T) {
	for _, in := range []string{"always p TestX\n", "sometimes p TestX reason\n"} {
		if _, err := parseAllow(strings.NewReader(in), false); err == nil {
			t.Errorf("%q: no error", in)
		}
	}
	rules, err := parseAllow(strings.NewReader("always p T  two  words \n"), false)
	if err != nil || len(rules) != 1 || rules[0].reason != "two  words" {
		t.Errorf("rules %+v, %v", rules, err)
	}
}
