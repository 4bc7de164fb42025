package arch

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"sync"

	"github.com/afin-bench/afin/factor"
)

// Family orders (the authors' family IDs): adapters, batch arrays and
// graph inputs come in these orders.
var (
	PriorFamilies = []string{factor.DiagGaussianFamily, factor.FullRankGaussianFamily, factor.DiagStudentTFamily, factor.DiagLaplaceFamily}
	LikFamilies   = []string{factor.LinGaussianFamily, factor.BernoulliLogitFamily, factor.BinomialLogitFamily, factor.LinStudentTFamily, factor.GaussianFamily}
)

// Descriptor widths (channels per node / pair descriptor) of each family,
// in PriorFamilies / LikFamilies order; see priorDescriptors and
// likDescriptors for the channels (App. B.1, "Inputs and factor types").
var (
	PriorNodeWidth = []int{3, 3, 4, 3}
	PriorPairWidth = []int{7, 8, 8, 7}
	LikNodeWidth   = []int{5, 5, 7, 6, 5}
	LikPairWidth   = []int{9, 9, 11, 10, 6}
)

func familyIndex(list []string, f string) int {
	for i, g := range list {
		if g == f {
			return i
		}
	}
	return -1
}

// Batch is the network input for B tasks that share d. Likelihood tokens
// are padded to NPad per task; LikMask marks real tokens per family, so a
// padded token has an all-zero mask row and is ignored by attention and
// pooling. All arrays are row-major float32 with the shapes in the
// comments; descriptors are symlog'd already.
type Batch struct {
	B, D, NPad int

	PriorNode [][]float32 // per prior family: (B, d, χ)
	PriorPair [][]float32 // per prior family: (B, d, d, χ)
	PriorMask []float32   // (B, 4) one-hot prior family
	LikNode   [][]float32 // per likelihood family: (B, NPad, d, χ)
	LikPair   [][]float32 // per likelihood family: (B, NPad, d, d, χ)
	LikMask   []float32   // (B, NPad, 5) one-hot family, zero rows for padding
	Z         []float32   // (B, d) targets for training; nil otherwise
}

func symlog(x float64) float32 {
	if x < 0 {
		return float32(-math.Log1p(-x))
	}
	return float32(math.Log1p(x))
}

func safeLog(x float64) float64 { return math.Log(math.Max(x, 1e-6)) }

func delta(i, j int) float64 {
	if i == j {
		return 1
	}
	return 0
}

// checkFloats is how many descriptor values NewBatch writes between two
// looks at its context: a few hundred microseconds of work, so a cancel
// is seen at once even for a task of thousands of sites in high d.
const checkFloats = 1 << 16

// NewBatch builds the network input for tasks sharing d, padding the
// sites to nPad (0 means the largest N of the batch, at least 1). z, when
// not nil, holds one target per task (the training label). It stops with
// ctx's error soon after ctx is done (within checkFloats descriptor values).
func NewBatch(ctx context.Context, tasks []*factor.Task, nPad int, z [][]float64) (*Batch, error) {
	return newBatch(ctx, tasks, nPad, z, nil)
}

// newBatch is NewBatch with a hook called after each token's descriptors
// (prior or site) with the number of values written: tests cancel from
// inside the work through it.
func newBatch(ctx context.Context, tasks []*factor.Task, nPad int, z [][]float64, onToken func(values int)) (*Batch, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	d, nPad, err := batchShape(tasks, nPad)
	if err != nil {
		return nil, err
	}
	b := allocBatch(len(tasks), d, nPad)
	written := 0 // descriptor values since the last look at ctx
	progress := func(values int) error {
		if onToken != nil {
			onToken(values)
		}
		if written += values; written < checkFloats {
			return nil
		}
		written = 0
		return ctx.Err()
	}
	if onToken == nil && len(tasks) > 1 {
		// A training batch (no progress to report): its tasks fill
		// disjoint rows, on every core; each worker looks at ctx itself.
		if err := b.fillParallel(ctx, tasks); err != nil {
			return nil, err
		}
	} else {
		for k, t := range tasks {
			if err := b.fillTask(k, t, progress); err != nil {
				return nil, err
			}
		}
	}
	if z != nil {
		if err := b.setTargets(z); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// batchShape checks the tasks share a dimension d ≥ 1 and have their
// priors, and resolves the padding (0: the largest N, at least 1).
func batchShape(tasks []*factor.Task, nPad int) (d, pad int, err error) {
	if len(tasks) == 0 {
		return 0, 0, fmt.Errorf("arch: empty batch")
	}
	d = tasks[0].D
	maxN := 0
	for k, t := range tasks {
		if t.D != d {
			return 0, 0, fmt.Errorf("arch: batch task %d has d=%d, want %d", k, t.D, d)
		}
		if t.Prior == nil || t.Prior.Dim() != d {
			return 0, 0, fmt.Errorf("arch: task %d: prior missing or of the wrong dimension", k)
		}
		maxN = max(maxN, t.N())
	}
	if d < 1 {
		return 0, 0, fmt.Errorf("arch: d must be ≥ 1, got %d", d)
	}
	if nPad == 0 {
		nPad = max(maxN, 1)
	}
	if nPad < maxN {
		return 0, 0, fmt.Errorf("arch: padding %d is below the largest N %d", nPad, maxN)
	}
	return d, nPad, nil
}

// allocBatch allocates every family's descriptor arrays and masks for B
// tasks of dimension d padded to nPad sites.
func allocBatch(B, d, nPad int) *Batch {
	b := &Batch{B: B, D: d, NPad: nPad}
	b.PriorNode = make([][]float32, len(PriorFamilies))
	b.PriorPair = make([][]float32, len(PriorFamilies))
	for f := range PriorFamilies {
		b.PriorNode[f] = make([]float32, B*d*PriorNodeWidth[f])
		b.PriorPair[f] = make([]float32, B*d*d*PriorPairWidth[f])
	}
	b.PriorMask = make([]float32, B*len(PriorFamilies))
	b.LikNode = make([][]float32, len(LikFamilies))
	b.LikPair = make([][]float32, len(LikFamilies))
	for f := range LikFamilies {
		b.LikNode[f] = make([]float32, B*nPad*d*LikNodeWidth[f])
		b.LikPair[f] = make([]float32, B*nPad*d*d*LikPairWidth[f])
	}
	b.LikMask = make([]float32, B*nPad*len(LikFamilies))
	return b
}

// fillTask writes task k's prior and site tokens, calling progress with
// the values written after each token.
func (b *Batch) fillTask(k int, t *factor.Task, progress func(values int) error) error {
	d, nPad := b.D, b.NPad
	f := familyIndex(PriorFamilies, t.Prior.Family())
	if f < 0 {
		return fmt.Errorf("arch: task %d: unknown prior family %q", k, t.Prior.Family())
	}
	b.PriorMask[k*len(PriorFamilies)+f] = 1
	wn, wp := PriorNodeWidth[f], PriorPairWidth[f]
	if err := priorDescriptors(t.Prior, b.PriorNode[f][k*d*wn:(k+1)*d*wn], b.PriorPair[f][k*d*d*wp:(k+1)*d*d*wp]); err != nil {
		return fmt.Errorf("arch: task %d: %w", k, err)
	}
	if err := progress(d*wn + d*d*wp); err != nil {
		return err
	}
	for n, lik := range t.Factors {
		f := familyIndex(LikFamilies, lik.Family())
		if f < 0 {
			return fmt.Errorf("arch: task %d factor %d: unknown family %q", k, n, lik.Family())
		}
		tok := k*nPad + n
		b.LikMask[tok*len(LikFamilies)+f] = 1
		wn, wp := LikNodeWidth[f], LikPairWidth[f]
		if err := likDescriptors(lik, d, b.LikNode[f][tok*d*wn:(tok+1)*d*wn], b.LikPair[f][tok*d*d*wp:(tok+1)*d*d*wp]); err != nil {
			return fmt.Errorf("arch: task %d factor %d: %w", k, n, err)
		}
		if err := progress(d*wn + d*d*wp); err != nil {
			return err
		}
	}
	return nil
}

// fillParallel fills every task on GOMAXPROCS goroutines and returns the
// first error by task order.
func (b *Batch) fillParallel(ctx context.Context, tasks []*factor.Task) error {
	errs := make([]error, len(tasks))
	next := make(chan int, len(tasks))
	for k := range tasks {
		next <- k
	}
	close(next)
	var wg sync.WaitGroup
	for range min(len(tasks), runtime.GOMAXPROCS(0)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			written := 0
			progress := func(values int) error {
				if written += values; written < checkFloats {
					return nil
				}
				written = 0
				return ctx.Err()
			}
			for k := range next {
				errs[k] = b.fillTask(k, tasks[k], progress)
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// setTargets stores one training target per task, in float32.
func (b *Batch) setTargets(z [][]float64) error {
	if len(z) != b.B {
		return fmt.Errorf("arch: %d targets for %d tasks", len(z), b.B)
	}
	d := b.D
	b.Z = make([]float32, b.B*d)
	for k, zk := range z {
		if len(zk) != d {
			return fmt.Errorf("arch: target %d has length %d, want %d", k, len(zk), d)
		}
		for i, v := range zk {
			b.Z[k*d+i] = float32(v)
		}
	}
	return nil
}

// priorDescriptors fills the node (d, χn) and pair (d, d, χp) channels of
// the prior token (App. B.1).
func priorDescriptors(p factor.Prior, node, pair []float32) error {
	d := p.Dim()
	mu := p.Location()
	put := func(dst []float32, vals ...float64) {
		for c, v := range vals {
			dst[c] = symlog(v)
		}
	}
	switch q := p.(type) {
	case *factor.DiagGaussian, *factor.DiagLaplace, *factor.DiagStudentT:
		var scale []float64
		var extra []float64
		switch q := q.(type) {
		case *factor.DiagGaussian:
			scale = q.Scale
		case *factor.DiagLaplace:
			scale = q.Scale
		case *factor.DiagStudentT:
			scale = q.Scale
			extra = []float64{math.Log(math.Max(q.DF, 1e-6))}
		}
		ls := make([]float64, d)
		r := make([]float64, d)
		for i := range d {
			s := math.Max(scale[i], 1e-6)
			ls[i] = math.Log(s)
			r[i] = mu[i] / s
		}
		wn, wp := 3+len(extra), 7+len(extra)
		for i := range d {
			put(node[i*wn:], append(append([]float64{}, extra...), mu[i], ls[i], r[i])...)
			for j := range d {
				put(pair[(i*d+j)*wp:], append(append([]float64{}, extra...), mu[i], ls[i], r[i], mu[j], ls[j], r[j], delta(i, j))...)
			}
		}
	case *factor.FullRankGaussian:
		lam := q.Precision
		D := make([]float64, d)
		for i := range d {
			D[i] = math.Max(lam[i*d+i], 1e-6)
		}
		for i := range d {
			put(node[i*3:], mu[i], D[i], mu[i]*math.Sqrt(D[i]))
			for j := range d {
				l := lam[i*d+j]
				put(pair[(i*d+j)*8:], mu[i], mu[j], D[i], D[j], l, l*mu[i], l*mu[j], delta(i, j))
			}
		}
	default:
		return fmt.Errorf("prior type %T is not supported", p)
	}
	return nil
}

func norm(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += v * v
	}
	return math.Sqrt(s)
}

// likDescriptors fills the node (d, χn) and pair (d, d, χp) channels of
// one likelihood token (App. B.1).
func likDescriptors(lik factor.Likelihood, d int, node, pair []float32) error {
	put := func(dst []float32, vals ...float64) {
		for c, v := range vals {
			dst[c] = symlog(v)
		}
	}
	switch f := lik.(type) {
	case *factor.Gaussian:
		v := f.Y
		if len(v) != d {
			return fmt.Errorf("observation has length %d, want %d", len(v), d)
		}
		ls := safeLog(f.Sigma)
		rho := math.Log1p(norm(v))
		var m float64
		for _, x := range v {
			m += x
		}
		m /= float64(d)
		for i := range d {
			put(node[i*5:], v[i], ls, rho, m, v[i]*v[i])
			for j := range d {
				put(pair[(i*d+j)*6:], v[i], v[j], ls, v[i]*v[j], delta(i, j), rho)
			}
		}
		return nil
	}
	x := lik.Covariate()
	if len(x) != d {
		return fmt.Errorf("covariate has length %d, want %d", len(x), d)
	}
	rho := math.Log1p(norm(x))
	// Each family has scalar head channels h, a signed response s that
	// multiplies x, and the shared [x_i, (x_j, x_i·x_j,) s·x_i (, s·x_j)] tail.
	var head []float64
	var s float64
	switch f := lik.(type) {
	case *factor.LinGaussian:
		head, s = []float64{f.Y, safeLog(f.Sigma), rho}, f.Y
	case *factor.LinStudentT:
		head, s = []float64{f.Y, safeLog(f.Sigma), safeLog(f.DF), rho}, f.Y
	case *factor.BernoulliLogit:
		sg := 2*f.Y - 1
		head, s = []float64{f.Y, sg, rho}, sg
	case *factor.BinomialLogit:
		nc := math.Max(float64(f.Trials), 1)
		q := f.Y / nc
		sg := 2*q - 1
		head, s = []float64{f.Y, math.Log1p(nc), q, sg, rho}, sg
	default:
		return fmt.Errorf("likelihood type %T is not supported", lik)
	}
	h := len(head)
	wn, wp := h+2, h+6
	var hs [6]float32
	for c, v := range head {
		hs[c] = symlog(v)
	}
	for i := range d {
		copy(node[i*wn:], hs[:h])
		put(node[i*wn+h:], x[i], s*x[i])
		for j := range d {
			o := (i*d + j) * wp
			copy(pair[o:], hs[:h])
			put(pair[o+h:], x[i], x[j], x[i]*x[j], s*x[i], s*x[j], delta(i, j))
		}
	}
	return nil
}
