package cpu

import (
	"context"
	"math"

	"github.com/afin-bench/afin/afin/arch"
	"github.com/afin-bench/afin/internal/gemm"
)

// The paper's Merge (Sec. 4.2 "Merging", App. B.2): the BoxTransformer
// blocks with factor-axis attention, forward (merge, boxTransformer,
// attention) and backward (mergeBackward, boxTransformerBackward,
// attentionBackward).

// block is one packed BoxTransformer merge block.
type block struct {
	lnAttnNode, lnAttnPair, lnFFNNode, lnFFNPair layerNorm
	mix                                          [2]float64 // softmax of the score-mix logits
	mixT                                         *arch.Tensor
	q, k, v, out, ffn                            *box
}

func packBlock(m arch.MergeBlock, c int) (block, error) {
	ln := func(l arch.LayerNorm) layerNorm {
		return layerNorm{g: append([]float32(nil), l.G.Data...), b: append([]float32(nil), l.B.Data...), decl: l}
	}
	blk := block{lnAttnNode: ln(m.LNAttnNode), lnAttnPair: ln(m.LNAttnPair), lnFFNNode: ln(m.LNFFNNode), lnFFNPair: ln(m.LNFFNPair)}
	blk.mix, blk.mixT = softmax2(m.Mix.Data), m.Mix
	var err error
	for _, p := range []struct {
		dst **box
		src arch.BoxMLP
	}{{&blk.q, m.Q}, {&blk.k, m.K}, {&blk.v, m.V}, {&blk.out, m.Out}, {&blk.ffn, m.FFN}} {
		if *p.dst, err = packBox(p.src, c); err != nil {
			return blk, err
		}
	}
	return blk, nil
}

func softmax2(logits []float32) [2]float64 {
	a, b := float64(logits[0]), float64(logits[1])
	m := math.Max(a, b)
	ea, eb := math.Exp(a-m), math.Exp(b-m)
	return [2]float64{ea / (ea + eb), eb / (ea + eb)}
}

// scales are the factors of the node and pair parts of the scores:
// mix weight / (d or d²) / √u.
func (blk *block) scales(d, u int) (sx, sp float32) {
	su := 1 / math.Sqrt(float64(u))
	return float32(blk.mix[0] / float64(d) * su), float32(blk.mix[1] / float64(d*d) * su)
}

// blockSave is what one BoxTransformer block saves in training for its
// backward.
type blockSave struct {
	p, x       []float32 // block input
	p2, x2     []float32 // after the attention residual (FFN input)
	qh, kh, vh []float32 // head-major Q (scaled), K, V
	a          []float32 // attention probabilities, heads×K×K
	mp, mx     []float32 // mixed values (the output map's input)
}

// merge is the paper's Merge (Sec. 4.2, App. B.2): the BoxTransformer
// blocks in turn, in place on the tokens w.x, w.p. With sv set each block
// saves in sv.blocks what boxTransformerBackward needs.
func (n *Net) merge(ctx context.Context, w *workspace, K, d int, sv *taskSave) error {
	if sv != nil {
		for len(sv.blocks) < len(n.blocks) {
			sv.blocks = append(sv.blocks, blockSave{})
		}
	}
	for bi := range n.blocks {
		var bs *blockSave
		if sv != nil {
			bs = &sv.blocks[bi]
		}
		if err := n.boxTransformer(ctx, w, &n.blocks[bi], bs, K, d); err != nil {
			return err
		}
	}
	return nil
}

// boxTransformer is one BoxTransformer merge block (App. B.2): pre-norm
// factor-axis attention whose output map's increment is added to the
// un-normalised tokens, then the FFN increment; P is re-symmetrised after
// each, as the reference does. With bs set (training) it saves the
// block's input, the attention's values and the FFN's input in bs.
func (n *Net) boxTransformer(ctx context.Context, w *workspace, blk *block, bs *blockSave, K, d int) error {
	if bs != nil {
		bs.p, bs.x = keep(bs.p, w.p), keep(bs.x, w.x)
	}
	if err := n.qkv(ctx, w, blk, K, d, bs == nil); err != nil {
		return err
	}
	if err := n.attention(ctx, w, bs, K, d); err != nil {
		return err
	}
	if err := n.outResidual(ctx, w, blk, K, d); err != nil {
		return err
	}
	if bs != nil {
		bs.p2, bs.x2 = keep(bs.p2, w.p), keep(bs.x2, w.x)
	}
	return n.ffnResidual(ctx, w, blk, K, d)
}

// attention mixes the values (w.vh) over the factor axis into w.mx, w.mp.
// At inference (bs nil) keys stream in blocks through an online softmax
// (attendOnline), so memory does not grow as K²; in training (bs set)
// all keys are taken at once (attendAllKeys) and Q, K, V, the
// probabilities and the mixed values are saved in bs, as
// attentionBackward needs the K×K probabilities anyway.
func (n *Net) attention(ctx context.Context, w *workspace, bs *blockSave, K, d int) error {
	if bs == nil {
		return n.attendOnline(ctx, w, K, d)
	}
	bs.qh, bs.kh, bs.vh = keep(bs.qh, w.qh), keep(bs.kh, w.kh), keep(bs.vh, w.vh)
	n.attendAllKeys(w, bs, K, d)
	bs.mp, bs.mx = keep(bs.mp, w.mp), keep(bs.mx, w.mx)
	return nil
}

// qkv fills w.qh, w.kh, w.vh from LN(tokens) through the Q, K, V maps,
// head-major; the score scales (mix weights, 1/d or 1/d², 1/√u) are
// folded into Q.
func (n *Net) qkv(ctx context.Context, w *workspace, blk *block, K, d int, compact bool) error {
	c := n.cfg.C
	h := n.cfg.Heads
	u := c / h
	size := h * K * headWidth(d, u, compact)
	w.qh, w.kh, w.vh = grow(w.qh, size), grow(w.kh, size), grow(w.vh, size)
	in := boxIn{p: w.p, x: w.x, k: K, d: d, lnP: &blk.lnAttnPair, lnX: &blk.lnAttnNode}
	sx, sp := blk.scales(d, u)
	emit := func(dst []float32, sc headScales) boxEmit {
		return func(k0, k1 int, dP, dX []float32) { toHeads(dst, dP, dX, k0, k1, K, d, c, h, sc, compact) }
	}
	// In the compact layout an off-diagonal pair entry stands for (i, j)
	// and (j, i): Q's carries the factor 2 of the score.
	off := sp
	if compact {
		off = 2 * sp
	}
	maps := []*box{blk.q, blk.k, blk.v}
	emits := []boxEmit{emit(w.qh, headScales{sx, sp, off}), emit(w.kh, headScales{1, 1, 1}), emit(w.vh, headScales{1, 1, 1})}
	if err := n.boxMLPs(ctx, w, maps, in, emits); err != nil {
		return err
	}
	w.mx, w.mp = grow(w.mx, K*d*c), grow(w.mp, K*d*d*c)
	return nil
}

// headWidth is one token's width in one head of Q, K or V: its d node
// entries and its pair entries, u channels each. The pair part of all
// three is symmetric in (i, j), so at inference (compact) only the
// d(d+1)/2 entries with i ≤ j are kept, and a score's pair sum counts
// each off-diagonal entry twice: the same scores and mixed values as
// the full d², with up to half the products (the factor-axis attention
// is over 90 % of a large task's FLOPs). Training keeps all d² entries,
// which its backward reads.
func headWidth(d, u int, compact bool) int {
	if compact {
		return (d + d*(d+1)/2) * u
	}
	return (d + d*d) * u
}

// headScales multiply a map's node entries, diagonal pair entries and
// off-diagonal pair entries on their way into the head-major layout.
type headScales struct{ node, diag, off float32 }

// toHeads writes a Q/K/V map's outputs for tokens [k0,k1) head-major:
// dst[head][token] = [node (d×u), sym(pair) (d²×u, or its upper
// triangle row by row when compact)], scaled by sc.
func toHeads(dst, dP, dX []float32, k0, k1, K, d, c, h int, sc headScales, compact bool) {
	u := c / h
	D := headWidth(d, u, compact)
	for k := k0; k < k1; k++ {
		t := k - k0
		for hd := 0; hd < h; hd++ {
			o := dst[(hd*K+k)*D : (hd*K+k+1)*D]
			for i := 0; i < d; i++ {
				src := dX[(t*d+i)*c+hd*u : (t*d+i)*c+hd*u+u]
				for ch, v := range src {
					o[i*u+ch] = v * sc.node
				}
			}
			q := o[d*u:]
			for i := 0; i < d; i++ {
				j0 := 0
				if compact {
					j0 = i
				}
				for j := j0; j < d; j++ {
					a := dP[((t*d+i)*d+j)*c+hd*u:]
					b := dP[((t*d+j)*d+i)*c+hd*u:]
					f := sc.off
					if i == j {
						f = sc.diag
					}
					for ch := 0; ch < u; ch++ {
						q[ch] = 0.5 * (a[ch] + b[ch]) * f
					}
					q = q[u:]
				}
			}
		}
	}
}

// attendOnline computes, head by head, softmax attention over all K tokens
// and scatters the mixed values into w.mx, w.mp. Queries go in chunks of
// queryChunk and keys in blocks of keyBlock with an online softmax (a
// running maximum and sum per query, earlier partial outputs rescaled
// when the maximum grows), so memory does not grow as K² and each key
// block's packed K and V are reused from cache by a whole query chunk.
// Scores are Q·Kᵀ and outputs A·V, both through the packed kernel.
func (n *Net) attendOnline(ctx context.Context, w *workspace, K, d int) error {
	c := n.cfg.C
	h := n.cfg.Heads
	u := c / h
	D := headWidth(d, u, true)
	kb := min(K, keyBlock)
	// In high d a query chunk is cut so one (query chunk, key block) tile,
	// the work between two looks at ctx, stays near attendTileMACs.
	bq := min(K, queryChunk, max(1, attendTileMACs/(kb*D)))
	nb := (K + kb - 1) / kb
	w.scores, w.outs = grow(w.scores, bq*kb), grow(w.outs, bq*D)
	w.rowMax, w.rowSum = grow(w.rowMax, bq), grow(w.rowSum, bq)
	for len(w.pk) < nb {
		w.pk, w.pv = append(w.pk, &gemm.Packed{}), append(w.pv, &gemm.Packed{})
	}
	for hd := 0; hd < h; hd++ {
		kh, vh := w.kh[hd*K*D:(hd+1)*K*D], w.vh[hd*K*D:(hd+1)*K*D]
		for b := 0; b < nb; b++ {
			k0, k1 := b*kb, min(K, (b+1)*kb)
			if err := w.pk[b].Repack(kh[k0*D:k1*D], D, k1-k0, true); err != nil {
				return err
			}
			if err := w.pv[b].Repack(vh[k0*D:k1*D], k1-k0, D, false); err != nil {
				return err
			}
		}
		q := w.qh[hd*K*D : (hd+1)*K*D]
		for q0 := 0; q0 < K; q0 += bq {
			m := min(bq, K-q0)
			if err := w.attendChunk(ctx, q[q0*D:], m, D, nb); err != nil {
				return err
			}
			fromHead(w, w.outs, q0, m, d, c, hd*u, u, true)
		}
	}
	return nil
}

// attendChunk leaves in w.outs the attention outputs of m queries (rows
// of q) over all nb key blocks, looking at ctx before each block.
func (w *workspace) attendChunk(ctx context.Context, q []float32, m, D, nb int) error {
	for r := 0; r < m; r++ {
		w.rowMax[r] = float32(math.Inf(-1))
		w.rowSum[r] = 0
	}
	for b := 0; b < nb; b++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		nk := w.pk[b].N
		w.mul(w.pk[b], w.scores, nk, q, D, m, 0)
		for r := 0; r < m; r++ {
			s := w.scores[r*nk : (r+1)*nk]
			mx := maxOf(s, w.rowMax[r])
			sum := gemm.ExpSum(s, mx)
			if b > 0 && mx > w.rowMax[r] { // rescale what earlier blocks added
				f := float32(math.Exp(float64(w.rowMax[r] - mx)))
				w.rowSum[r] *= f
				o := w.outs[r*D : (r+1)*D]
				for i := range o {
					o[i] *= f
				}
			}
			w.rowMax[r] = mx
			w.rowSum[r] += sum
		}
		op := gemm.Accumulate
		if b == 0 {
			op = 0
		}
		w.mul(w.pv[b], w.outs, D, w.scores, nk, m, op)
	}
	for r := 0; r < m; r++ {
		inv := 1 / w.rowSum[r]
		o := w.outs[r*D : (r+1)*D]
		for i := range o {
			o[i] *= inv
		}
	}
	return nil
}

// maxOf is the largest of m and the scores s. Four running maxima break
// the chain of dependent compares, and a plain compare replaces the
// builtin max, whose NaN handling made this loop a fifth of attention's
// time at N = 20,000 (pprof). A NaN score is skipped here but still
// reaches the sum of exponentials, so it still makes the output NaN.
func maxOf(s []float32, m float32) float32 {
	m0, m1, m2, m3 := m, m, m, m
	i := 0
	for ; i+4 <= len(s); i += 4 {
		if s[i] > m0 {
			m0 = s[i]
		}
		if s[i+1] > m1 {
			m1 = s[i+1]
		}
		if s[i+2] > m2 {
			m2 = s[i+2]
		}
		if s[i+3] > m3 {
			m3 = s[i+3]
		}
	}
	for ; i < len(s); i++ {
		if s[i] > m0 {
			m0 = s[i]
		}
	}
	return max(m0, m1, m2, m3)
}

// attendAllKeys is attendOnline over all keys at once (training),
// keeping the probabilities in bs.a.
func (n *Net) attendAllKeys(w *workspace, bs *blockSave, K, d int) {
	c, h := n.cfg.C, n.cfg.Heads
	u := c / h
	D := (d + d*d) * u
	bs.a = grow(bs.a, h*K*K)
	w.outs = grow(w.outs, K*D)
	if len(w.pk) == 0 {
		w.pk, w.pv = append(w.pk, &gemm.Packed{}), append(w.pv, &gemm.Packed{})
	}
	for hd := 0; hd < h; hd++ {
		q, k, v := w.qh[hd*K*D:(hd+1)*K*D], w.kh[hd*K*D:(hd+1)*K*D], w.vh[hd*K*D:(hd+1)*K*D]
		a := bs.a[hd*K*K : (hd+1)*K*K]
		_ = w.pk[0].Repack(k, D, K, true)
		_ = w.pv[0].Repack(v, K, D, false)
		w.mul(w.pk[0], a, K, q, D, K, 0)
		for r := 0; r < K; r++ {
			row := a[r*K : (r+1)*K]
			mx := row[0]
			for _, s := range row {
				mx = max(mx, s)
			}
			inv := 1 / gemm.ExpSum(row, mx)
			for i := range row {
				row[i] *= inv
			}
		}
		w.mul(w.pv[0], w.outs, D, a, K, K, 0)
		fromHead(w, w.outs, 0, K, d, c, hd*u, u, false)
	}
}

// fromHead scatters one head's outputs (layout as headWidth's) for
// queries [q0, q0+m) back into the channel slots [off, off+u) of w.mx and
// w.mp; a compact output's (i, j) entry goes to (j, i) too.
func fromHead(w *workspace, outs []float32, q0, m, d, c, off, u int, compact bool) {
	D := headWidth(d, u, compact)
	for r := 0; r < m; r++ {
		o := outs[r*D : (r+1)*D]
		k := q0 + r
		for i := 0; i < d; i++ {
			copy(w.mx[(k*d+i)*c+off:(k*d+i)*c+off+u], o[i*u:(i+1)*u])
		}
		pair := w.mp[k*d*d*c:]
		if !compact {
			for ij := 0; ij < d*d; ij++ {
				copy(pair[ij*c+off:ij*c+off+u], o[d*u+ij*u:d*u+(ij+1)*u])
			}
			continue
		}
		src := o[d*u:]
		for i := 0; i < d; i++ {
			for j := i; j < d; j++ {
				v := src[:u]
				copy(pair[(i*d+j)*c+off:(i*d+j)*c+off+u], v)
				copy(pair[(j*d+i)*c+off:(j*d+i)*c+off+u], v)
				src = src[u:]
			}
		}
	}
}

// outResidual adds the output map's increment on the mixed values.
func (n *Net) outResidual(ctx context.Context, w *workspace, blk *block, K, d int) error {
	c := n.cfg.C
	resid := func(k0, k1 int, dP, dX []float32) {
		addSym(w.p[k0*d*d*c:k1*d*d*c], dP, d, c, true)
		addTo(w.x[k0*d*c:k1*d*c], dX)
	}
	return n.boxMLP(ctx, w, blk.out, boxIn{p: w.mp, x: w.mx, k: K, d: d}, resid)
}

// ffnResidual adds the FFN increment on LN(tokens). The FFN reads
// LN(token) and then its own token is updated: safe, because boxMLP
// finishes reading a chunk before emitting it.
func (n *Net) ffnResidual(ctx context.Context, w *workspace, blk *block, K, d int) error {
	c := n.cfg.C
	resid := func(k0, k1 int, dP, dX []float32) {
		addSym(w.p[k0*d*d*c:k1*d*d*c], dP, d, c, true)
		addTo(w.x[k0*d*c:k1*d*c], dX)
	}
	ffn := boxIn{p: w.p, x: w.x, k: K, d: d, lnP: &blk.lnFFNPair, lnX: &blk.lnFFNNode}
	return n.boxMLP(ctx, w, blk.ffn, ffn, resid)
}

// mergeBackward backpropagates the tokens' gradients (s.gP, s.gX)
// through the BoxTransformer blocks, last first.
func (n *Net) mergeBackward(ctx context.Context, w *workspace, s *trainState, K, d int) error {
	for bi := len(n.blocks) - 1; bi >= 0; bi-- {
		if err := n.boxTransformerBackward(ctx, w, s, bi, K, d); err != nil {
			return err
		}
	}
	return nil
}

// boxTransformerBackward backpropagates one merge block: FFN, output map,
// attention, and the Q, K, V maps.
func (n *Net) boxTransformerBackward(ctx context.Context, w *workspace, s *trainState, bi, K, d int) error {
	c := n.cfg.C
	blk, bs := &n.blocks[bi], &s.sv.blocks[bi]
	s.symResidual(d, c)
	ffn := boxBackIn{boxIn: boxIn{p: bs.p2, x: bs.x2, k: K, d: d, lnP: &blk.lnFFNPair, lnX: &blk.lnFFNNode},
		gOutP: s.tP, gOutX: s.tX, gInP: s.gP, gInX: s.gX, lgP: s.ln(&blk.lnFFNPair), lgX: s.ln(&blk.lnFFNNode)}
	if err := n.boxMLPBackward(ctx, w, &s.gw, blk.ffn, s.box(blk.ffn), ffn); err != nil {
		return err
	}
	s.symResidual(d, c)
	s.gMP, s.gMX = grow(s.gMP, K*d*d*c), grow(s.gMX, K*d*c)
	clear(s.gMP)
	clear(s.gMX)
	out := boxBackIn{boxIn: boxIn{p: bs.mp, x: bs.mx, k: K, d: d}, gOutP: s.tP, gOutX: s.tX, gInP: s.gMP, gInX: s.gMX}
	if err := n.boxMLPBackward(ctx, w, &s.gw, blk.out, s.box(blk.out), out); err != nil {
		return err
	}
	n.attentionBackward(s, blk, bs, K, d)
	for _, m := range []struct {
		b *box
		g []float32
	}{{blk.q, s.gQ}, {blk.k, s.gK}, {blk.v, s.gV}} {
		s.fromHeadsGrad(m.g, K, d, c, n.cfg.Heads)
		in := boxBackIn{boxIn: boxIn{p: bs.p, x: bs.x, k: K, d: d, lnP: &blk.lnAttnPair, lnX: &blk.lnAttnNode},
			gOutP: s.tP, gOutX: s.tX, gInP: s.gP, gInX: s.gX, lgP: s.ln(&blk.lnAttnPair), lgX: s.ln(&blk.lnAttnNode)}
		if err := n.boxMLPBackward(ctx, w, &s.gw, m.b, s.box(m.b), in); err != nil {
			return err
		}
	}
	return nil
}

// symResidual turns s.gP (the gradient of sym(P + sym(D))) into the
// gradient of P and leaves the raw branch gradients in s.tP, s.tX.
func (s *trainState) symResidual(d, c int) {
	symInPlace(s.gP, d, c)
	s.tP = keep(s.tP, s.gP)
	s.tX = keep(s.tX, s.gX)
}

// fromHeadsGrad maps head-major gradients of a Q/K/V map's outputs back
// to its raw branch outputs in s.tP (symmetrised, as the forward
// symmetrised the pair output) and s.tX.
func (s *trainState) fromHeadsGrad(g []float32, K, d, c, h int) {
	u := c / h
	D := (d + d*d) * u
	s.tP, s.tX = grow(s.tP, K*d*d*c), grow(s.tX, K*d*c)
	for hd := 0; hd < h; hd++ {
		for k := 0; k < K; k++ {
			o := g[(hd*K+k)*D : (hd*K+k+1)*D]
			for i := 0; i < d; i++ {
				copy(s.tX[(k*d+i)*c+hd*u:(k*d+i)*c+hd*u+u], o[i*u:(i+1)*u])
			}
			for ij := 0; ij < d*d; ij++ {
				copy(s.tP[(k*d*d+ij)*c+hd*u:(k*d*d+ij)*c+hd*u+u], o[d*u+ij*u:d*u+(ij+1)*u])
			}
		}
	}
	symInPlace(s.tP, d, c)
}

// attentionBackward computes, per head, the gradients of Q, K, V (into
// s.gQ, s.gK, s.gV, with respect to the maps' outputs, before Q's
// scaling) from the mixed values' gradients s.gMP, s.gMX, and the score
// mix logits' gradient.
func (n *Net) attentionBackward(s *trainState, blk *block, bs *blockSave, K, d int) {
	c, h := n.cfg.C, n.cfg.Heads
	u := c / h
	D := (d + d*d) * u
	s.gQ, s.gK, s.gV = grow(s.gQ, h*K*D), grow(s.gK, h*K*D), grow(s.gV, h*K*D)
	dO, dA, t := make([]float32, K*D), make([]float32, K*K), make([]float32, K*K)
	var pk gemm.Packed
	sx, sp := blk.scales(d, u)
	var dsx, dsp float64
	for hd := 0; hd < h; hd++ {
		q, k, v := bs.qh[hd*K*D:(hd+1)*K*D], bs.kh[hd*K*D:(hd+1)*K*D], bs.vh[hd*K*D:(hd+1)*K*D]
		a := bs.a[hd*K*K : (hd+1)*K*K]
		gq, gk, gv := s.gQ[hd*K*D:(hd+1)*K*D], s.gK[hd*K*D:(hd+1)*K*D], s.gV[hd*K*D:(hd+1)*K*D]
		for kk := 0; kk < K; kk++ {
			for i := 0; i < d; i++ {
				copy(dO[kk*D+i*u:kk*D+(i+1)*u], s.gMX[(kk*d+i)*c+hd*u:(kk*d+i)*c+hd*u+u])
			}
			for ij := 0; ij < d*d; ij++ {
				copy(dO[kk*D+d*u+ij*u:kk*D+d*u+(ij+1)*u], s.gMP[(kk*d*d+ij)*c+hd*u:(kk*d*d+ij)*c+hd*u+u])
			}
		}
		_ = pk.Repack(v, D, K, true)
		pk.Mul(dA, K, dO, D, K, 0) // dA = dO·Vᵀ
		transpose(t, a, K)
		_ = pk.Repack(dO, K, D, false)
		pk.Mul(gv, D, t, K, K, 0) // dV = Aᵀ·dO
		for r := 0; r < K; r++ {
			var dot float32
			for l := 0; l < K; l++ {
				dot += dA[r*K+l] * a[r*K+l]
			}
			for l := 0; l < K; l++ {
				dA[r*K+l] = a[r*K+l] * (dA[r*K+l] - dot) // dS
			}
		}
		_ = pk.Repack(k, K, D, false)
		pk.Mul(gq, D, dA, K, K, 0) // dQ̃ = dS·K
		transpose(t, dA, K)
		_ = pk.Repack(q, K, D, false)
		pk.Mul(gk, D, t, K, K, 0) // dK = dSᵀ·Q̃
		for kk := 0; kk < K; kk++ {
			row, qr := gq[kk*D:(kk+1)*D], q[kk*D:(kk+1)*D]
			for i := range row {
				if i < d*u {
					dsx += float64(row[i]) * float64(qr[i]) / float64(sx)
					row[i] *= sx
				} else {
					dsp += float64(row[i]) * float64(qr[i]) / float64(sp)
					row[i] *= sp
				}
			}
		}
	}
	su := 1 / math.Sqrt(float64(u))
	dw := [2]float64{dsx / float64(d) * su, dsp / float64(d*d) * su}
	dot := blk.mix[0]*dw[0] + blk.mix[1]*dw[1]
	gm := s.g.of(blk.mixT)
	for i := range gm {
		gm[i] += float32(blk.mix[i] * (dw[i] - dot))
	}
}

// transpose writes the K×K matrix a transposed into t.
func transpose(t, a []float32, K int) {
	for i := 0; i < K; i++ {
		for j := 0; j < K; j++ {
			t[j*K+i] = a[i*K+j]
		}
	}
}

// mergeWorkspaceFloats is the merge blocks' buffers at inference: the
// mixed attention output (one token set) and head-major Q, K, V in the
// compact layout (headWidth), one head's packed keys
// and values (a copy plus panels padded to 16), and one query chunk's
// scores against one key block, its outputs and softmax rows.
func mergeWorkspaceFloats(cfg arch.Config, d, n int) int64 {
	K, dd, c, h := int64(1+n), int64(d), int64(cfg.C), int64(cfg.Heads)
	D := int64(headWidth(d, cfg.C/cfg.Heads, true))
	f := K*(dd+dd*dd)*c + 3*h*K*D
	kb := min(K, int64(keyBlock))
	f += 2*K*D + D*((K+kb-1)/kb)*roundUp(kb, 16) + K*roundUp(D, 16)
	bq := min(K, queryChunk, max(1, attendTileMACs/(kb*D)))
	return f + bq*kb + bq*D + 2*bq
}

// mergeFLOPs counts Blocks BoxTransformer blocks: five BoxMLPs (Q, K, V,
// output and feed-forward maps), each costing box, and Q·Kᵀ and A·V over
// all heads, 4·K²·width FLOPs with width = heads·headWidth: (d+d²)·C as
// the network is written (full), (d + d(d+1)/2)·C as inference runs it.
func mergeFLOPs(cfg arch.Config, d, n int, box func(h, l int) int64, full bool) int64 {
	K := int64(1 + n)
	width := int64(cfg.Heads * headWidth(d, cfg.C/cfg.Heads, !full))
	return int64(cfg.Blocks) * (5*box(cfg.MergeH, cfg.MergeL) + 4*K*K*width)
}
