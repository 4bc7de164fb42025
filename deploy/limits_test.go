package deploy

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/afin-bench/afin/bench"
)

// estimateMargin is the factor `afin bench --estimate` puts between the
// largest shard's estimated CPU time and the time limit it suggests.
const estimateMargin = 1.5

// suggested is the time limit, in seconds, `afin bench --estimate` gives
// the largest of shards shards of a suite under a profile.
func suggested(t *testing.T, suite, profile string, shards int) float64 {
	t.Helper()
	prof, err := bench.GetProfile(profile)
	if err != nil {
		t.Fatal(err)
	}
	e, err := bench.EstimateSuite(bench.EstimateConfig{Suite: suite, Profile: prof, Shards: shards})
	if err != nil {
		t.Fatal(err)
	}
	return e.Largest * estimateMargin
}

// checkLimit: a shipped limit covers the estimate's suggestion and is not
// more than twice it (a limit left behind by a refit of the cost model).
func checkLimit(t *testing.T, what string, limit, want float64) {
	t.Helper()
	if limit < want || limit > 2*want {
		t.Errorf("%s is %.0f s; `afin bench --estimate` suggests %.0f s (set it to %.0f s, %s)", what, limit, want, want+60, slurmClock(want))
	}
}

// slurmClock writes seconds as days-hours:minutes:seconds, rounded up to
// the minute.
func slurmClock(s float64) string {
	m := int(s/60) + 1
	return fmt.Sprintf("%d-%02d:%02d:00", m/(24*60), m/60%24, m%60)
}

// parseSlurmTime reads days-hours:minutes:seconds or hours:minutes:seconds.
func parseSlurmTime(s string) (float64, error) {
	days := 0
	if d, rest, ok := strings.Cut(s, "-"); ok {
		var err error
		if days, err = strconv.Atoi(d); err != nil {
			return 0, err
		}
		s = rest
	}
	parts := strings.Split(s, ":")
	if len(parts) != 3 {
		return 0, fmt.Errorf("time %q: want [D-]HH:MM:SS", s)
	}
	total := float64(days) * 86400
	for i, p := range parts {
		v, err := strconv.Atoi(p)
		if err != nil {
			return 0, err
		}
		total += float64(v) * []float64{3600, 60, 1}[i]
	}
	return total, nil
}

// TestLimitsFromEstimate: the Slurm script's own --time (for its defaults,
// the synthetic suite's paper profile on the 16 array tasks its comment
// submits) and the Kubernetes pods' activeDeadlineSeconds (for the Job's
// SUITE, PROFILE and SHARDS) are what `afin bench --estimate` suggests.
func TestLimitsFromEstimate(t *testing.T) {
	data, err := os.ReadFile("slurm-bench.sh")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^#SBATCH --time=(\S+)$`).FindSubmatch(data)
	if m == nil {
		t.Fatal("slurm-bench.sh has no #SBATCH --time line")
	}
	limit, err := parseSlurmTime(string(m[1]))
	if err != nil {
		t.Fatal(err)
	}
	checkLimit(t, "slurm-bench.sh's --time", limit, suggested(t, "synthetic", "paper", 16))

	data, err = os.ReadFile("k8s-bench-job.yaml")
	if err != nil {
		t.Fatal(err)
	}
	job, err := decodeJob(data)
	if err != nil {
		t.Fatal(err)
	}
	pod := job.Spec.Template.Spec
	if pod.ActiveDeadlineSeconds == nil {
		t.Fatal("k8s-bench-job.yaml: the pods have no activeDeadlineSeconds")
	}
	c := pod.Containers[0]
	shards, err := strconv.Atoi(envValue(c, "SHARDS"))
	if err != nil {
		t.Fatal(err)
	}
	checkLimit(t, "k8s-bench-job.yaml's activeDeadlineSeconds", float64(*pod.ActiveDeadlineSeconds),
		suggested(t, envValue(c, "SUITE"), envValue(c, "PROFILE"), shards))
}
