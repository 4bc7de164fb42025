package cpu

import (
	"context"
	"fmt"
	"math"

	"github.com/afin-bench/afin/afin/arch"
)

// task locates one task's inputs in a batch: its prior family and its
// real likelihood sites (padding skipped: a padded token changes nothing,
// as it is masked out of attention keys and of pooling).
type task struct {
	b, prior int
	sites    []int // site indices in the batch
	fams     []int // their likelihood families
}

func locate(w *workspace, batch *arch.Batch, b int) (task, error) {
	t := task{b: b, prior: -1, sites: w.sites[:0], fams: w.fams[:0]}
	defer func() { w.sites, w.fams = t.sites, t.fams }() // keep the grown slices
	np, nl := len(arch.PriorFamilies), len(arch.LikFamilies)
	for f := 0; f < np; f++ {
		if batch.PriorMask[b*np+f] != 0 {
			t.prior = f
		}
	}
	if t.prior < 0 {
		return t, fmt.Errorf("task %d has no prior family set", b)
	}
	for s := 0; s < batch.NPad; s++ {
		for f := 0; f < nl; f++ {
			if batch.LikMask[(b*batch.NPad+s)*nl+f] != 0 {
				t.sites = append(t.sites, s)
				t.fams = append(t.fams, f)
				break
			}
		}
	}
	return t, nil
}

// Gaussian runs the network with the Gaussian decoder on every task of
// batch and returns the means (B×d) and precisions (B×d×d, row-major,
// symmetric and diagonally dominant), as afin's GoMLX forward does. It
// checks ctx between layers and stops with ctx's error.
func (n *Net) Gaussian(ctx context.Context, batch *arch.Batch) (mean, precision []float32, err error) {
	if n.gaussian == nil {
		return nil, nil, fmt.Errorf("cpu: network has no Gaussian decoder (decoder %q)", n.cfg.Decoder)
	}
	if err := checkBatch(batch); err != nil {
		return nil, nil, err
	}
	w, _ := n.pool.Get().(*workspace)
	if w == nil {
		w = &workspace{}
	}
	defer n.pool.Put(w)
	d := batch.D
	mean = make([]float32, batch.B*d)
	precision = make([]float32, batch.B*d*d)
	for b := 0; b < batch.B; b++ {
		t, err := locate(w, batch, b)
		if err != nil {
			return nil, nil, fmt.Errorf("cpu: %w", err)
		}
		if err := n.encode(ctx, w, batch, t); err != nil {
			return nil, nil, fmt.Errorf("cpu: task %d: %w", b, err)
		}
		n.decodeGaussian(w, d, mean[b*d:(b+1)*d], precision[b*d*d:(b+1)*d*d])
	}
	return mean, precision, nil
}

func checkBatch(b *arch.Batch) error {
	if b == nil || b.B < 1 || b.D < 1 || b.NPad < 0 {
		return fmt.Errorf("cpu: empty batch")
	}
	if len(b.PriorMask) != b.B*len(arch.PriorFamilies) || len(b.LikMask) != b.B*b.NPad*len(arch.LikFamilies) {
		return fmt.Errorf("cpu: batch masks have the wrong length")
	}
	return nil
}

// encode runs adapters, encoder and merge blocks on one task and leaves
// the pooled tokens in w.poolX (d×C) and w.poolP (d×d×C).
func (n *Net) encode(ctx context.Context, w *workspace, batch *arch.Batch, t task) error {
	c, d := n.cfg.C, batch.D
	K := 1 + len(t.sites)
	w.x, w.p = grow(w.x, K*d*c), grow(w.p, K*d*d*c)
	if err := n.adapters(ctx, w, batch, t); err != nil {
		return err
	}
	for _, e := range n.encoder {
		in := boxIn{p: w.p, x: w.x, k: K, d: d}
		err := n.runBox(ctx, w, e, in, func(k0, k1 int, dP, dX []float32) {
			addSym(w.p[k0*d*d*c:k1*d*d*c], dP, d, c, false)
			addTo(w.x[k0*d*c:k1*d*c], dX)
		})
		if err != nil {
			return err
		}
	}
	for bi := range n.merge {
		if err := n.mergeBlock(ctx, w, &n.merge[bi], K, d); err != nil {
			return err
		}
	}
	return n.pool2(ctx, w, K, d)
}

// adapters fills the tokens: token 0 from the prior's adapters, then one
// token per real site from its family's adapters (runs of consecutive
// sites of one family go through the MLPs together, a BoxMLP chunk of
// tokens at a time, with a look at ctx before each). Pair outputs are
// symmetrised.
func (n *Net) adapters(ctx context.Context, w *workspace, batch *arch.Batch, t task) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c, d, b := n.cfg.C, batch.D, t.b
	f := t.prior
	wn, wp := arch.PriorNodeWidth[f], arch.PriorPairWidth[f]
	n.prior[f].node.run(w, w.x[:d*c], batch.PriorNode[f][b*d*wn:], d)
	n.prior[f].pair.run(w, w.p[:d*d*c], batch.PriorPair[f][b*d*d*wp:], d*d)
	symInPlace(w.p[:d*d*c], d, c)
	tc := tokensPerChunk(d)
	for s := 0; s < len(t.sites); {
		if err := ctx.Err(); err != nil {
			return err
		}
		e := s + 1
		for e < len(t.sites) && e-s < tc && t.fams[e] == t.fams[s] && t.sites[e] == t.sites[e-1]+1 {
			e++
		}
		f := t.fams[s]
		tok := b*batch.NPad + t.sites[s]
		wn, wp := arch.LikNodeWidth[f], arch.LikPairWidth[f]
		k0 := 1 + s
		n.lik[f].node.run(w, w.x[k0*d*c:], batch.LikNode[f][tok*d*wn:], (e-s)*d)
		n.lik[f].pair.run(w, w.p[k0*d*d*c:], batch.LikPair[f][tok*d*d*wp:], (e-s)*d*d)
		symInPlace(w.p[k0*d*d*c:(1+e)*d*d*c], d, c)
		s = e
	}
	return nil
}

// addSym adds sym(dP) to the pair tokens p (both tokens×d×d×C); with
// resym the sum is symmetrised again, as the merge blocks do.
func addSym(p, dP []float32, d, c int, resym bool) {
	for o := 0; o < len(p); o += d * d * c {
		pt, dt := p[o:o+d*d*c], dP[o:o+d*d*c]
		for i := 0; i < d; i++ {
			for j := i; j < d; j++ {
				a, b := pt[(i*d+j)*c:(i*d+j+1)*c], pt[(j*d+i)*c:(j*d+i+1)*c]
				da, db := dt[(i*d+j)*c:(i*d+j+1)*c], dt[(j*d+i)*c:(j*d+i+1)*c]
				for ch := range a {
					s := 0.5 * (da[ch] + db[ch])
					x, y := a[ch]+s, b[ch]+s
					if resym {
						x = 0.5 * (x + y)
						y = x
					}
					a[ch], b[ch] = x, y
				}
			}
		}
	}
}

// symInPlace replaces each pair token by its symmetrisation over (i, j).
func symInPlace(p []float32, d, c int) {
	for o := 0; o < len(p); o += d * d * c {
		pt := p[o : o+d*d*c]
		for i := 0; i < d; i++ {
			for j := i + 1; j < d; j++ {
				a, b := pt[(i*d+j)*c:(i*d+j+1)*c], pt[(j*d+i)*c:(j*d+i+1)*c]
				for ch := range a {
					m := 0.5 * (a[ch] + b[ch])
					a[ch], b[ch] = m, m
				}
			}
		}
	}
}

func addTo(dst, src []float32) {
	for i, v := range src {
		dst[i] += v
	}
}

// pool2 sums the tokens over factors (the prior included) and
// symmetrises the pair sum (App. B.2, "Pooling"), looking at ctx every
// BoxMLP chunk of tokens.
func (n *Net) pool2(ctx context.Context, w *workspace, K, d int) error {
	c := n.cfg.C
	w.poolX, w.poolP = grow(w.poolX, d*c), grow(w.poolP, d*d*c)
	clear(w.poolX)
	clear(w.poolP)
	tc := tokensPerChunk(d)
	for k := 0; k < K; k++ {
		if k%tc == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		addTo(w.poolX, w.x[k*d*c:(k+1)*d*c])
		addTo(w.poolP, w.p[k*d*d*c:(k+1)*d*d*c])
	}
	symInPlace(w.poolP, d, c)
	return nil
}

// decodeGaussian maps the pooled tokens to the mean and the diagonally
// dominant precision (App. B.3): A = sym(s·offdiag(P)) off the diagonal,
// Λ_ii = Σ_{j≠i}|A_ij| + softplus(diag(X_i)) + 1e-4.
func (n *Net) decodeGaussian(w *workspace, d int, mean, prec []float32) {
	g := n.gaussian
	w.dec1, w.dec2, w.dec3 = grow(w.dec1, d*d), grow(w.dec2, d), grow(w.dec3, d)
	g.offdiag.run(w, w.dec1, w.poolP, d*d)
	g.diag.run(w, w.dec2, w.poolX, d)
	n.richFeatures(w, d)
	g.mean.run(w, w.dec3, w.rich, d)
	s := 0.5 * n.cfg.OffdiagMul
	for i := 0; i < d; i++ {
		var a float64
		for j := 0; j < d; j++ {
			if i == j {
				continue
			}
			v := s * (float64(w.dec1[i*d+j]) + float64(w.dec1[j*d+i]))
			prec[i*d+j] = float32(v)
			a += math.Abs(v)
		}
		prec[i*d+i] = float32(a + softplus(float64(w.dec2[i])) + 1e-4)
		mean[i] = w.dec3[i]
	}
}

// richFeatures builds [X_i, ½(row_i+col_i), diag_i, gN, gP] (d×5C) from
// the pooled tokens.
func (n *Net) richFeatures(w *workspace, d int) {
	c := n.cfg.C
	w.rich = grow(w.rich, d*5*c)
	clear(w.rich)
	inv, inv2 := 1/float32(d), 1/float32(d*d)
	gN, gP := w.rich[3*c:4*c], w.rich[4*c:5*c] // row 0's, copied to the others below
	for i := 0; i < d; i++ {
		r := w.rich[i*5*c : (i+1)*5*c]
		copy(r[:c], w.poolX[i*c:(i+1)*c])
		copy(r[2*c:3*c], w.poolP[(i*d+i)*c:(i*d+i+1)*c])
		for ch, v := range w.poolX[i*c : (i+1)*c] {
			gN[ch] += v * inv
		}
		for j := 0; j < d; j++ {
			pij, pji := w.poolP[(i*d+j)*c:(i*d+j+1)*c], w.poolP[(j*d+i)*c:(j*d+i+1)*c]
			for ch := 0; ch < c; ch++ {
				r[c+ch] += 0.5 * (pij[ch] + pji[ch]) * inv
				gP[ch] += pij[ch] * inv2
			}
		}
	}
	for i := 1; i < d; i++ {
		copy(w.rich[i*5*c+3*c:(i+1)*5*c], w.rich[3*c:5*c])
	}
}

func softplus(x float64) float64 {
	if x > 30 {
		return x
	}
	return math.Log1p(math.Exp(x))
}

// SummaryWidth is the length of one task's pooled summary (see Summary)
// for channel width c.
func SummaryWidth(c int) int { return 3 * c }

// Summary returns each task's pooled representation as one vector of
// SummaryWidth(C) numbers (B rows): the pooled tokens after the merge
// blocks, before any decoder, averaged over coordinates so that every d
// gives the same length — the node tokens' mean, the pair tokens'
// diagonal mean and the pair tokens' mean (the decoder's global
// features gN and gP, and the diagonal it reads per coordinate). Both
// decoders read these pooled tokens, so the summary serves either.
func (n *Net) Summary(ctx context.Context, batch *arch.Batch) ([]float64, error) {
	if err := checkBatch(batch); err != nil {
		return nil, err
	}
	w, _ := n.pool.Get().(*workspace)
	if w == nil {
		w = &workspace{}
	}
	defer n.pool.Put(w)
	c, d := n.cfg.C, batch.D
	width := SummaryWidth(c)
	out := make([]float64, batch.B*width)
	for b := 0; b < batch.B; b++ {
		t, err := locate(w, batch, b)
		if err != nil {
			return nil, fmt.Errorf("cpu: %w", err)
		}
		if err := n.encode(ctx, w, batch, t); err != nil {
			return nil, fmt.Errorf("cpu: task %d: %w", b, err)
		}
		row := out[b*width : (b+1)*width]
		inv, inv2 := 1/float64(d), 1/float64(d*d)
		for i := 0; i < d; i++ {
			for ch := 0; ch < c; ch++ {
				row[ch] += float64(w.poolX[i*c+ch]) * inv
				row[c+ch] += float64(w.poolP[(i*d+i)*c+ch]) * inv
			}
			for j := 0; j < d; j++ {
				for ch := 0; ch < c; ch++ {
					row[2*c+ch] += float64(w.poolP[(i*d+j)*c+ch]) * inv2
				}
			}
		}
	}
	return out, nil
}
