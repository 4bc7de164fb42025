// Command skipcheck reads `go test -json` on stdin, prints what plain
// `go test` would (a line per package, the whole output of a package that
// failed), lists every test that skipped with its message, and exits 1
// when a package failed or a test skipped for a reason the allow-list does
// not name. A test that should run and silently does not is a failure.
//
//	go test -json ./... | go run ./tools/skipcheck -allow .ci/skips-allowed.txt [-ci]
//
// Each allow-list line is `scope package test reason`: scope is `always`
// (a platform, a flag such as -long, a tool CI does not install) or
// `local` (allowed on a developer's machine, not under -ci, where the
// shared data folder and Chromium are present); package is the import
// path; test the test's full name, or `*` for any test of the package;
// reason a substring of the skip message. `#` starts a comment.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

func main() {
	allowPath := flag.String("allow", "", "allow-list file (required)")
	ci := flag.Bool("ci", false, "CI: skips allowed only locally fail too")
	flag.Parse()
	if *allowPath == "" || flag.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "usage: go test -json ./... | skipcheck -allow FILE [-ci]")
		os.Exit(2)
	}
	f, err := os.Open(*allowPath)
	if err != nil {
		fmt.Fprintln(os.Stderr, "skipcheck:", err)
		os.Exit(2)
	}
	allow, err := parseAllow(f, *ci)
	f.Close()
	if err != nil {
		fmt.Fprintf(os.Stderr, "skipcheck: %s: %v\n", *allowPath, err)
		os.Exit(2)
	}
	sum, err := scan(os.Stdin, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "skipcheck: reading go test -json:", err)
		os.Exit(2)
	}
	if !report(os.Stdout, sum, allow) {
		os.Exit(1)
	}
}

// rule is one allow-list line.
type rule struct {
	pkg, test, reason string
}

func (r rule) matches(s skip) bool {
	return r.pkg == s.pkg && (r.test == "*" || r.test == s.test) && strings.Contains(s.msg, r.reason)
}

// parseAllow reads the allow-list; under ci the `local` rules are left out.
func parseAllow(r io.Reader, ci bool) ([]rule, error) {
	var rules []rule
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 4 {
			return nil, fmt.Errorf("line %d: want `scope package test reason`, got %q", n, line)
		}
		scope := f[0]
		if scope != "always" && scope != "local" {
			return nil, fmt.Errorf("line %d: scope %q, want always or local", n, scope)
		}
		if scope == "local" && ci {
			continue
		}
		// The reason keeps its inner spacing: it is the rest of the line.
		rest := line
		for range 3 {
			rest = strings.TrimSpace(rest)
			rest = rest[strings.IndexAny(rest, " \t"):]
		}
		rules = append(rules, rule{pkg: f[1], test: f[2], reason: strings.TrimSpace(rest)})
	}
	return rules, sc.Err()
}

// event is one line of `go test -json` (cmd/test2json's TestEvent, and the
// build events go test adds).
type event struct {
	Action  string
	Package string
	Test    string
	Elapsed float64
	Output  string
}

type skip struct {
	pkg, test, msg string
}

type summary struct {
	skips  []skip
	failed []string // packages
}

// pkgState buffers a package's output until its verdict.
type pkgState struct {
	out     []string
	testOut map[string][]string
}

// scan renders the stream as plain go test does and gathers the skips and
// the failed packages.
func scan(r io.Reader, w io.Writer) (*summary, error) {
	sum := &summary{}
	pkgs := map[string]*pkgState{}
	state := func(p string) *pkgState {
		s := pkgs[p]
		if s == nil {
			s = &pkgState{testOut: map[string][]string{}}
			pkgs[p] = s
		}
		return s
	}
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadString('\n')
		if len(line) > 0 {
			var e event
			if !strings.HasPrefix(line, "{") || json.Unmarshal([]byte(line), &e) != nil {
				// go itself (downloads, vet) writes plain lines.
				fmt.Fprint(w, line)
			} else {
				handle(w, sum, state, e)
			}
		}
		if err == io.EOF {
			return sum, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

func handle(w io.Writer, sum *summary, state func(string) *pkgState, e event) {
	switch e.Action {
	case "build-output":
		fmt.Fprint(w, e.Output)
		return
	}
	if e.Package == "" {
		return
	}
	s := state(e.Package)
	switch e.Action {
	case "output":
		s.out = append(s.out, e.Output)
		if e.Test != "" {
			s.testOut[e.Test] = append(s.testOut[e.Test], e.Output)
		}
	case "skip":
		if e.Test == "" {
			// A package without test files.
			fmt.Fprintf(w, "?   \t%s\t[no test files]\n", e.Package)
			return
		}
		sum.skips = append(sum.skips, skip{pkg: e.Package, test: e.Test, msg: skipMessage(s.testOut[e.Test])})
	case "pass":
		if e.Test == "" {
			fmt.Fprintf(w, "ok  \t%s\t%.3fs\n", e.Package, e.Elapsed)
		}
	case "fail":
		if e.Test == "" {
			for _, o := range s.out {
				fmt.Fprint(w, o)
			}
			if !contains(sum.failed, e.Package) {
				sum.failed = append(sum.failed, e.Package)
			}
		}
	}
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// skipMessage is what the test logged, without go test's own markers.
func skipMessage(out []string) string {
	var parts []string
	for _, o := range out {
		t := strings.TrimSpace(o)
		if t == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- ") {
			continue
		}
		parts = append(parts, t)
	}
	return strings.Join(parts, " ")
}

// report lists the skips and says whether the run passes.
func report(w io.Writer, sum *summary, allow []rule) bool {
	sort.Slice(sum.skips, func(i, j int) bool {
		a, b := sum.skips[i], sum.skips[j]
		if a.pkg != b.pkg {
			return a.pkg < b.pkg
		}
		return a.test < b.test
	})
	var bad []skip
	if len(sum.skips) > 0 {
		fmt.Fprintf(w, "\n%d tests skipped:\n", len(sum.skips))
	}
	for _, s := range sum.skips {
		verdict := "allowed"
		if !allowed(s, allow) {
			verdict = "NOT ALLOWED"
			bad = append(bad, s)
		}
		fmt.Fprintf(w, "  %-11s %s %s: %s\n", verdict, s.pkg, s.test, s.msg)
	}
	ok := true
	if len(bad) > 0 {
		fmt.Fprintf(w, "FAIL: %d tests skipped for a reason the allow-list does not name (a test that should run did not)\n", len(bad))
		ok = false
	}
	if len(sum.failed) > 0 {
		fmt.Fprintf(w, "FAIL: %d packages failed: %s\n", len(sum.failed), strings.Join(sum.failed, " "))
		ok = false
	}
	return ok
}

func allowed(s skip, allow []rule) bool {
	for _, r := range allow {
		if r.matches(s) {
			return true
		}
	}
	return false
}
