package main

import (
	"context"
	"flag"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/afin-bench/afin/bench"
	"github.com/afin-bench/afin/catalog"
	"github.com/afin-bench/afin/factor"
	"github.com/afin-bench/afin/methods"
	"github.com/afin-bench/afin/posterior"
	"github.com/afin-bench/afin/records"
)

// toyMethod is a researcher's own method, registered only inside this
// test binary: the closed-form posterior under another name, so its
// answers are real and checkable.
type toyMethod struct{ methods.Method }

const toyName = "toy-registry"

func (toyMethod) Name() string { return toyName }

// A new method is one file plus one registration: once registered, the
// CLI's help and flags, a bench run, record validation and the report
// all know it, and no other file names it.
func TestRegisteredMethodReachesEveryLayer(t *testing.T) {
	exact, err := methods.New(methods.Exact, nil)
	if err != nil {
		t.Fatal(err)
	}
	if records.KnownMethod(toyName) {
		t.Fatalf("%s known before it was registered", toyName)
	}
	err = methods.Register(methods.Descriptor{
		Entry: catalog.Entry{Name: toyName, Summary: "the exact posterior, renamed (a test's method)",
			Kind: methods.KindDraws, Family: catalog.Exact, Rank: 50, Label: "Toy Method", Colour: "#123456"},
		New:   func(string, *methods.Env) (methods.Method, error) { return toyMethod{exact}, nil },
		Slots: exact.Slots,
		Flags: func(fs *flag.FlagSet, f *methods.InferFlags) {
			f.Budget = fs.Int("draws", 300, "draws from the toy posterior")
		},
		AnySuite: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { methods.Unregister(toyName) })
	if err := methods.Register(methods.Descriptor{Entry: catalog.Entry{Name: toyName, Kind: methods.KindDraws, Family: catalog.Exact},
		New: func(string, *methods.Env) (methods.Method, error) { return nil, nil }}); err == nil {
		t.Error("a second registration of the same name was accepted")
	}

	// afin infer: listed in --help, its own flags bound, and it runs.
	_, stdout, stderr := cliRun(t, "infer", "--help")
	if !strings.Contains(stdout+stderr, toyName) {
		t.Errorf("infer --help does not list %s:\n%s%s", toyName, stdout, stderr)
	}
	_, stdout, stderr = cliRun(t, "infer", "--method", toyName, "--help")
	if !strings.Contains(stdout+stderr, "draws from the toy posterior") {
		t.Errorf("infer --method %s --help lacks its flag:\n%s%s", toyName, stdout, stderr)
	}
	task := fdWrite(t, "task.json", `{"d":1,"prior":{"type":"diag_gaussian","loc":[2],"scale":[1]},"factors":[{"type":"gaussian","y":[4],"sigma":1}]}`)
	code, stdout, stderr := cliRun(t, "infer", "--method", toyName, "--task", task, "--draws", "50", "--json")
	if code != 0 || !strings.Contains(stdout, `"method":"`+toyName+`"`) {
		t.Fatalf("infer --method %s: exit %d\n%s%s", toyName, code, stdout, stderr)
	}

	// afin bench: a tiny synthetic run of the new method alone.
	dir := t.TempDir()
	res := filepath.Join(dir, "res")
	p, err := bench.GetProfile("smoke")
	if err != nil {
		t.Fatal(err)
	}
	p.NUTSDraws = []int{100, 200}
	cfg := bench.Config{
		Suite: "synthetic", Profile: p, Results: res, Seeds: []uint64{0},
		Methods: []string{toyName},
		BuildTask: func(s bench.Setting, seed uint64) (*factor.Task, error) {
			return &factor.Task{Name: s.Key, D: 2, Prior: &factor.DiagGaussian{Loc: []float64{0, 0}, Scale: []float64{1, 1}}}, nil
		},
		// The task is its prior: the reference is draws from it.
		Reference: func(ctx context.Context, task *factor.Task, p *bench.Profile) (*bench.Reference, error) {
			rng := rand.New(rand.NewPCG(1, 2))
			z := make([]float64, 4000)
			for i := range z {
				z[i] = rng.NormFloat64()
			}
			return &bench.Reference{Draws: &posterior.Draws{D: 2, Z: z}, Info: records.RefInfo{Kind: "exact"}}, nil
		},
	}
	if _, err := bench.Run(context.Background(), cfg); err != nil {
		t.Fatalf("bench run of %s: %v", toyName, err)
	}

	// Record validation accepts the new name (ReadDir validates every line).
	recs, err := records.ReadDir(res)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range recs {
		if r.Method == toyName {
			n++
		}
	}
	if n == 0 {
		t.Fatalf("no %s records among %d", toyName, len(recs))
	}

	// afin report: the method's label and colour reach the page.
	out := filepath.Join(dir, "out")
	if code, _, stderr := cliRun(t, "report", "--results", res, "--out", out); code != 0 {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	page, err := os.ReadFile(filepath.Join(out, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Toy Method", "#123456"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("report lacks %q", want)
		}
	}
}

// The help texts list methods from the catalog: a method registered with
// a budget kind, a family and the network role appears on the lines
// those roles govern, with no help text edited.
func TestHelpListsTheCatalog(t *testing.T) {
	const name = "toy-help"
	if err := catalog.Register(catalog.Entry{Name: name, Kind: methods.KindProposals, Family: catalog.VI, Network: true, Rank: 60}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { catalog.Unregister(name) })
	lineWith := func(text, key string) string {
		for _, l := range strings.Split(text, "\n") {
			if strings.Contains(l, key) {
				return l
			}
		}
		return ""
	}
	tests := []struct{ what, line string }{
		{"--proposals help", lineWith(budgetHelp(), "--proposals")},
		{"--steps help (VI methods)", lineWith(budgetHelp(), "--steps")},
		{"network methods' memory limit", lineWith(inferLimits(), "afin-snis")},
		{"--method's valid names", methodNames()},
	}
	for _, tt := range tests {
		if !strings.Contains(tt.line, name) {
			t.Errorf("%s lacks %s: %q", tt.what, name, tt.line)
		}
	}
}
