package methods

import (
	"encoding/binary"
	"hash/fnv"
	"math"
	"math/rand/v2"

	"github.com/afin-bench/afin/factor"
	"github.com/afin-bench/afin/internal/streams"
)

// fitRNG is the generator of an AFIN answer's fit check (measure), seeded
// from the answer rather than from the job: the network's answer to a
// task is the same at every seed, and so, with this, are its fit check's
// draws and its verdict (issue 40: seeded by the job, one answer 0.56 sd
// off passed the shift check at one seed and failed it at the others).
// The seed hashes the task as JSON and, for the Gaussian decoder, the
// answer's mean and the Cholesky factor of its covariance or precision; a flow's answer is fixed by the task and
// the checkpoint, which a run does not change.
func (p *proposal) fitRNG(task *factor.Task) *rand.Rand {
	h := fnv.New64a()
	if data, err := factor.MarshalTask(task); err == nil {
		h.Write(data)
	} else {
		// A task JSON cannot hold (none of the built-in families): its
		// log density at two fixed points stands for it.
		z := make([]float64, task.D)
		writeFloats(h, []float64{float64(task.D), float64(task.N()), task.LogDensity(z)})
		for i := range z {
			z[i] = 1
		}
		writeFloats(h, []float64{task.LogDensity(z)})
	}
	if p.g != nil {
		writeFloats(h, p.g.Mean)
		writeFloats(h, p.g.L)
	}
	return streams.New(h.Sum64(), streams.AFINFitCheck)
}

// writeFloats hashes xs by their bits.
func writeFloats(h interface{ Write([]byte) (int, error) }, xs []float64) {
	var b [8]byte
	for _, x := range xs {
		binary.LittleEndian.PutUint64(b[:], math.Float64bits(x))
		h.Write(b[:])
	}
}
