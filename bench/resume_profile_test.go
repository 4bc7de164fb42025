package bench

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/afin-bench/afin/records"
)

// Resuming a directory whose records of the suite were written at another
// profile is refused before any work, in one line naming both profiles
// and the --profile to resume with: the points both profiles share would
// otherwise count as done, and the new profile's curves would hold the
// other's points. --allow-mixed lets the mix through.
func TestResumeRefusesAnotherProfile(t *testing.T) {
	dir := t.TempDir()
	smoke := fakeConfig(dir, anyFake)
	smoke.Seeds = []uint64{0}
	if _, err := Run(context.Background(), smoke); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(filepath.Join(dir, "synthetic.jsonl"))
	quick := fakeConfig(dir, anyFake)
	q, _ := GetProfile("quick")
	q.NUTSDraws, q.FRVISteps = smoke.Profile.NUTSDraws, smoke.Profile.FRVISteps
	quick.Profile = q
	_, err := Run(context.Background(), quick)
	if !errors.Is(err, records.ErrMixedProfiles) {
		t.Fatalf("resume at another profile: %v, want ErrMixedProfiles", err)
	}
	for _, want := range []string{"profile smoke", "profile quick", "--profile smoke", "--allow-mixed"} {
		if !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("error %q is not one line naming %s", err, want)
		}
	}
	if after, _ := os.ReadFile(filepath.Join(dir, "synthetic.jsonl")); string(after) != string(before) {
		t.Error("the refused resume changed the results file")
	}
	quick.AllowMixed = true
	if sum, err := Run(context.Background(), quick); err != nil || sum.Ran == 0 {
		t.Fatalf("resume with --allow-mixed: %+v, %v", sum, err)
	}
}
