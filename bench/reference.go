package bench

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"

	"github.com/afin-bench/afin/factor"
	"github.com/afin-bench/afin/posterior"
	"github.com/afin-bench/afin/records"
	"github.com/afin-bench/afin/reference"
)

// Reference is the posterior every method of a task is scored against:
// draws for SW2 and the energy gap, and moments for M1 and M2 (exact for
// conjugate tasks, over all NUTS draws otherwise).
type Reference struct {
	Draws     *posterior.Draws
	Mean, Cov []float64
	Info      records.RefInfo
}

// ReferenceFunc returns the reference posterior of a task under a
// profile's reference settings.
type ReferenceFunc func(ctx context.Context, task *factor.Task, p *Profile) (*Reference, error)

// CachedReference returns a ReferenceFunc backed by package reference:
// exact for conjugate tasks, else a long NUTS run with the profile's
// settings, cached on disk under cacheDir ("" = the default cache) keyed
// by the task content and the settings. A NUTS reference that misses the
// convergence check is still used (and marked in the records), since a
// benchmark run should not die on one hard task.
func CachedReference(cacheDir string) ReferenceFunc {
	return func(ctx context.Context, task *factor.Task, p *Profile) (*Reference, error) {
		s := p.Reference
		s.CacheDir = cacheDir
		converged := true
		ref, err := reference.Get(ctx, task, s)
		if err != nil {
			var ce *reference.ConvergenceError
			if !errors.As(err, &ce) || ce.Reference == nil {
				return nil, err
			}
			ref, converged = ce.Reference, false
		}
		return referenceFrom(ref, converged), nil
	}
}

// referenceFrom is the Reference of a reference.Reference; converged
// says whether it passed its convergence check.
func referenceFrom(ref *reference.Reference, converged bool) *Reference {
	info := records.RefInfo{Kind: ref.Kind, Draws: ref.Draws.Len(), Hash: ref.Key}
	if ref.Kind == reference.KindNUTS {
		info.Draws = ref.Diagnostics.Draws
		info.Warmup = ref.Diagnostics.Warmup
		info.Rhat = ref.Diagnostics.MaxRhat
		info.ESS = ref.Diagnostics.MinESSBulk
		info.NotConverged = !converged
	}
	return &Reference{Draws: ref.Draws, Mean: ref.Mean, Cov: ref.Cov, Info: info}
}

// TaskHash is the hex SHA-256 of a task's canonical JSON.
func TaskHash(task *factor.Task) (string, error) {
	data, err := factor.MarshalTask(task)
	if err != nil {
		return "", fmt.Errorf("hashing task: %w", err)
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:]), nil
}

// momentErrors are the paper's M1 = ‖μ − μ_ref‖₂ and M2 = ‖Σ − Σ_ref‖_F
// against the reference's moments (exact ones for conjugate tasks); mean
// and cov are d's (Draws.MeanCov).
func momentErrors(d *posterior.Draws, mean, cov []float64, ref *Reference) (m1, m2 float64) {
	if ref.Mean == nil || ref.Cov == nil {
		return posterior.M1(d, ref.Draws), posterior.M2(d, ref.Draws)
	}
	return posterior.MeanError(mean, ref.Mean), posterior.CovError(cov, ref.Cov)
}

// marginalErrors are a point's worst per-coordinate errors, from its
// mean m and covariance c, against the reference in reference sds
// (records.Marginals): the reference's exact moments where it has them,
// its draws' otherwise. Any non-finite mean
// or sd, the point's or the reference's, makes all three NaN (null on
// disk), which no tolerance accepts.
func marginalErrors(m, c []float64, ref *Reference) *records.Marginals {
	rm, rc := ref.Mean, ref.Cov
	if rm == nil || rc == nil {
		rm, rc = ref.Draws.MeanCov()
	}
	dim := len(m)
	worst, lo, hi := 0.0, math.Inf(1), 0.0
	for i := range dim {
		sdRef := math.Sqrt(rc[i*dim+i])
		e := math.Abs(m[i]-rm[i]) / sdRef
		r := math.Sqrt(c[i*dim+i]) / sdRef
		if !(sdRef > 0) || math.IsInf(sdRef, 0) || math.IsNaN(e) || math.IsInf(e, 0) || math.IsNaN(r) || math.IsInf(r, 0) {
			nan := records.Num(math.NaN())
			return &records.Marginals{MaxMeanErr: nan, MinSDRatio: nan, MaxSDRatio: nan}
		}
		worst, lo, hi = max(worst, e), min(lo, r), max(hi, r)
	}
	return &records.Marginals{MaxMeanErr: records.Num(worst), MinSDRatio: records.Num(lo), MaxSDRatio: records.Num(hi)}
}
