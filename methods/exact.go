package methods

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/afin-bench/afin/catalog"
	"github.com/afin-bench/afin/factor"
	"github.com/afin-bench/afin/internal/streams"
	"github.com/afin-bench/afin/posterior"
)

// Exact is the closed-form posterior of a conjugate task.
const Exact = "exact"

func init() {
	mustRegister(Descriptor{
		Entry: catalog.Entry{
			Name: Exact, Summary: "the closed-form posterior of a conjugate task, and draws from it",
			Kind: KindDraws, Family: catalog.Exact,
			Rank: 1, Label: "Exact", Legend: 9, Colour: "#000000",
		},
		New:   func(string, *Env) (Method, error) { return exactMethod{}, nil },
		Slots: exactMethod{}.Slots,
		Flags: func(fs *flag.FlagSet, f *InferFlags) {
			f.Budget = fs.Int("draws", 2000, "draws from the exact posterior (0: moments only)")
		},
	})
}

// exactMethod is the closed-form posterior of a conjugate task, with
// draws from it at each budget (0: moments only).
type exactMethod struct{}

func (exactMethod) Name() string              { return Exact }
func (exactMethod) Kind() string              { return KindDraws }
func (exactMethod) Slots(ladder []int) []Slot { return ladderSlots(KindDraws, ladder) }

func (exactMethod) Run(ctx context.Context, job *Job, emit func(Point) error) error {
	if err := checkLadder(KindDraws, job.Ladder, 0); err != nil {
		return err
	}
	if !factor.IsConjugate(job.Task) {
		return fmt.Errorf("%w; this task has %s; use --method nuts for a reference", ErrNotConjugate, describeFamilies(job.Task))
	}
	for _, n := range job.Ladder {
		start := time.Now()
		mean, cov, err := factor.ExactPosterior(job.Task)
		if err != nil {
			return fmt.Errorf("exact: %w", err)
		}
		pt := Point{Slot: Slot{Kind: KindDraws, Budget: n}, Mean: mean, Cov: cov}
		if n > 0 {
			z, err := factor.GaussianDraws(streams.New(job.Seed, streams.ExactDraws), mean, cov, n)
			if err != nil {
				return fmt.Errorf("exact: sampling the posterior: %w", err)
			}
			pt.Draws = &posterior.Draws{D: job.Task.D, Z: z}
		}
		pt.Seconds = time.Since(start).Seconds()
		if err := emit(pt); err != nil {
			return err
		}
	}
	return nil
}

// describeFamilies names a task's prior and factor families, each once.
func describeFamilies(t *factor.Task) string {
	var fams []string
	for _, f := range t.Factors {
		if !slices.Contains(fams, f.Family()) {
			fams = append(fams, f.Family())
		}
	}
	if len(fams) == 0 {
		return "prior " + t.Prior.Family() + " and no factors"
	}
	return "prior " + t.Prior.Family() + " and factors " + strings.Join(fams, ", ")
}
