// Command tier runs one difficulty tier of the synthetic suite (by
// default the medium tier, d = 8, N = 64) with the given methods through
// afin's benchmark runner, so external methods such as exec:stan-smoke
// can be put beside afin's NUTS without running all 48 settings: Stan's
// R start-up makes a full suite slow. Results go to an ordinary results
// directory for `afin report`; reruns resume.
//
//	go run ./tools/stancompare/tier --methods nuts,exec:stan-smoke \
//	    --methods-file tools/stancompare/methods.json --results results/stan
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/afin-bench/afin/bench"
	"github.com/afin-bench/afin/methods"
)

func main() {
	group := flag.String("tier", "medium", "difficulty tier: easy, medium or hard")
	profile := flag.String("profile", "smoke", "bench profile")
	methodList := flag.String("methods", "nuts,exec:stan-smoke", "comma-separated methods")
	methodsFile := flag.String("methods-file", "tools/stancompare/methods.json", "methods file for exec:NAME")
	results := flag.String("results", "results/stan", "results directory")
	flag.Parse()
	if err := run(*group, *profile, *methodList, *methodsFile, *results); err != nil {
		fmt.Fprintln(os.Stderr, "tier:", err)
		os.Exit(1)
	}
}

func run(group, profile, methodList, methodsFile, results string) error {
	prof, err := bench.GetProfile(profile)
	if err != nil {
		return err
	}
	all, err := bench.Settings("synthetic")
	if err != nil {
		return err
	}
	var settings []bench.Setting
	for _, s := range all {
		if s.Group == group {
			settings = append(settings, s)
		}
	}
	if len(settings) == 0 {
		return fmt.Errorf("no synthetic settings in tier %q", group)
	}
	sum, err := bench.Run(context.Background(), bench.Config{
		Suite: "synthetic", Profile: prof, Results: results, Settings: settings,
		Methods: strings.Split(methodList, ","), Env: &methods.Env{MethodsFile: methodsFile},
		RefCacheDir: os.Getenv("AFIN_CACHE_DIR"),
		Log:         os.Stderr,
	})
	if sum != nil {
		fmt.Printf("tier %s: %d units (%d done before, %d run, %d failed), %d records in %s, %.0fs\n",
			group, sum.Units, sum.Skipped, sum.Ran, sum.Failed, sum.Records, sum.File, sum.Duration.Seconds())
	}
	return err
}
