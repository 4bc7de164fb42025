package calibration

import (
	"fmt"
	"math"

	"github.com/afin-bench/afin/internal/moments"
)

// CoverageLevels are the credible levels of the expected-coverage curves.
var CoverageLevels = []float64{0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99}

// Group is the verdict and the plotting data of one group of quantities.
type Group struct {
	Name    string `json:"name"`
	Members int    `json:"members"`
	// Pass: every member's rank ECDF stays inside its simultaneous band;
	// the band level is 1 − 0.05/Members (Bonferroni), so a calibrated
	// method passes a group with probability ≥ 95%.
	Pass bool `json:"pass"`
	// Exit names the first member and credible grid point that left the
	// band ("" when passing).
	Exit string `json:"exit,omitempty"`
	// Z is the ECDF grid; Diff[m][i] = F̂_m(Z[i]) − Z[i]; Lower and Upper
	// are the band's limits on that difference.
	Z     []float64   `json:"z"`
	Diff  [][]float64 `json:"diff"`
	Lower []float64   `json:"lower"`
	Upper []float64   `json:"upper"`
	// Coverage[i] is the share of (task, member) pairs whose true value
	// lies in the central CoverageLevels[i] credible interval (for the log
	// density: in the highest-density region of that mass).
	Coverage []float64 `json:"coverage"`
}

// Summary is a method's calibration over a set of simulated tasks.
type Summary struct {
	Tasks  int     `json:"tasks"`
	Groups []Group `json:"groups"`
	// Pass: every group passes.
	Pass bool `json:"pass"`
	// ZMean and ZSD are the mean and standard deviation of the z-scores
	// over tasks and coordinates (0 and 1 when calibrated); Contraction
	// is the mean posterior contraction.
	ZMean       float64 `json:"z_mean"`
	ZSD         float64 `json:"z_sd"`
	Contraction float64 `json:"contraction"`
}

// Summarize pools the ranks of tasks that share a dimension.
func Summarize(ranks []*TaskRanks) (*Summary, error) {
	n := len(ranks)
	if n < 2 {
		return nil, fmt.Errorf("%w: %d tasks, need at least 2", ErrInput, n)
	}
	d := len(ranks[0].Coord)
	members := map[string][][]float64{GroupCoordinates: make([][]float64, d),
		GroupLogDensity: {make([]float64, n)}, GroupProjection: {make([]float64, n)}}
	var zs, cs []float64
	for t, r := range ranks {
		if len(r.Coord) != d {
			return nil, fmt.Errorf("%w: task %d has d=%d, task 0 d=%d", ErrInput, t, len(r.Coord), d)
		}
		for j, u := range r.Coord {
			members[GroupCoordinates][j] = append(members[GroupCoordinates][j], u)
		}
		members[GroupLogDensity][0][t] = r.LogDensity
		members[GroupProjection][0][t] = r.Projection
		zs = append(zs, r.ZScore...)
		cs = append(cs, r.Contraction...)
	}
	s := &Summary{Tasks: n, Pass: true}
	s.ZMean, s.ZSD = meanSD(zs)
	s.Contraction, _ = meanSD(cs)
	for _, name := range []string{GroupCoordinates, GroupLogDensity, GroupProjection} {
		g, err := testGroup(name, members[name])
		if err != nil {
			return nil, err
		}
		s.Pass = s.Pass && g.Pass
		s.Groups = append(s.Groups, *g)
	}
	return s, nil
}

// testGroup checks each member's ranks against its band.
func testGroup(name string, ranks [][]float64) (*Group, error) {
	n := len(ranks[0])
	b, err := NewBand(n, min(max(n, 2), 50), 1-0.05/float64(len(ranks)))
	if err != nil {
		return nil, err
	}
	g := &Group{Name: name, Members: len(ranks), Pass: true, Z: b.Z,
		Lower: make([]float64, len(b.Z)), Upper: make([]float64, len(b.Z))}
	for i, z := range b.Z {
		g.Lower[i] = float64(b.Lower[i])/float64(n) - z
		g.Upper[i] = float64(b.Upper[i])/float64(n) - z
	}
	counts := make([]int, len(b.Z))
	for m, u := range ranks {
		ecdfCounts(u, b.Z, counts)
		diff := make([]float64, len(b.Z))
		for i, c := range counts {
			diff[i] = float64(c)/float64(n) - b.Z[i]
		}
		g.Diff = append(g.Diff, diff)
		if ok, i := b.Inside(u); !ok && g.Pass {
			g.Pass = false
			g.Exit = fmt.Sprintf("member %d at rank %.2f", m+1, b.Z[i])
		}
	}
	g.Coverage = coverage(name, ranks)
	return g, nil
}

// coverage is the expected-coverage curve: central intervals for
// coordinates and projections (|u − ½| ≤ c/2); highest-density regions for
// the log density (u ≥ 1 − c: the true point is inside the region of mass c
// where p̃ is highest exactly when its log density ranks in the top c).
func coverage(name string, ranks [][]float64) []float64 {
	out := make([]float64, len(CoverageLevels))
	total := 0
	for _, u := range ranks {
		for _, x := range u {
			total++
			for i, c := range CoverageLevels {
				in := math.Abs(x-0.5) <= c/2
				if name == GroupLogDensity {
					in = x >= 1-c
				}
				if in {
					out[i]++
				}
			}
		}
	}
	for i := range out {
		out[i] /= float64(total)
	}
	return out
}

// meanSD is the mean and sample (n−1) standard deviation of the finite
// values, both NaN for fewer than two.
func meanSD(x []float64) (float64, float64) {
	finite := make([]float64, 0, len(x))
	for _, v := range x {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			finite = append(finite, v)
		}
	}
	if len(finite) < 2 {
		return math.NaN(), math.NaN()
	}
	return moments.SampleMeanSD(finite)
}
