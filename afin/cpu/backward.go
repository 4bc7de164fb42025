package cpu

import (
	"context"
	"fmt"
	"math"
	"sync"

	"github.com/afin-bench/afin/afin/arch"
	"github.com/afin-bench/afin/internal/gemm"
)

// trainState is one LossGrad call's state: gradients, saved activations
// and backward buffers.
type trainState struct {
	g          gradSet
	boxes      map[*box]*boxGrad
	sv         taskSave
	gw         gradWS
	gP, gX     []float32 // gradient of the current token state
	tP, tX     []float32 // raw-branch gradients handed to a BoxMLP
	gMP, gMX   []float32 // gradient of the mixed attention values
	gQ, gK, gV []float32 // head-major gradients of Q, K, V
	flow       flowGrad
}

func (s *trainState) box(b *box) *boxGrad {
	bg := s.boxes[b]
	if bg == nil {
		bg = s.g.boxGradOf(b)
		s.boxes[b] = bg
	}
	return bg
}

func (s *trainState) ln(ln *layerNorm) lnGrad {
	return lnGrad{g: s.g.of(ln.decl.G), b: s.g.of(ln.decl.B)}
}

// LossGrad is the Gaussian decoder's training loss on batch (targets in
// batch.Z): −mean_b log q(z_b)/d, with log q = ½ log det Λ − ½ rᵀΛr −
// (d/2) log 2π, r = z − μ, and its gradient with respect to every tensor
// of the declaration, in Tensors() order (afin's GoMLX lossGrad computes
// the same; tests check every tensor's gradient against it and against
// finite differences). Activations are saved per residual layer and the
// layers' insides recomputed in the backward pass. Tasks run one after
// another on the calling goroutine; it checks ctx between layers.
func (n *Net) LossGrad(ctx context.Context, batch *arch.Batch) (loss float64, grads [][]float32, err error) {
	return n.LossGradWorkers(ctx, batch, 1)
}

// LossGradWorkers is LossGrad with the batch's tasks spread over up to
// workers goroutines (task b goes to worker b mod workers, and the
// workers' gradients are summed in worker order, so the result does not
// depend on scheduling).
func (n *Net) LossGradWorkers(ctx context.Context, batch *arch.Batch, workers int) (loss float64, grads [][]float32, err error) {
	if n.gaussian == nil {
		return 0, nil, fmt.Errorf("cpu: network has no Gaussian decoder")
	}
	return n.lossGrad(ctx, batch, workers, n.taskGrad)
}

// FlowLossGrad is LossGradWorkers for the flow decoder: the loss is
// −mean_b log q(z_b)/d under the flow at strength s (the training ramp;
// 1 at inference), log q by inverting the flow at z_b.
func (n *Net) FlowLossGrad(ctx context.Context, batch *arch.Batch, s float32, workers int) (loss float64, grads [][]float32, err error) {
	if n.flow == nil {
		return 0, nil, fmt.Errorf("cpu: network has no flow decoder")
	}
	return n.lossGrad(ctx, batch, workers, func(ctx context.Context, w *workspace, st *trainState, b *arch.Batch, t task, dlq float64) (float64, error) {
		return n.flowTaskGrad(ctx, w, st, b, t, s, dlq)
	})
}

// taskGradFunc runs one task forward and backward (see taskGrad).
type taskGradFunc func(ctx context.Context, w *workspace, s *trainState, batch *arch.Batch, t task, dlq float64) (float64, error)

func (n *Net) lossGrad(ctx context.Context, batch *arch.Batch, workers int, fn taskGradFunc) (loss float64, grads [][]float32, err error) {
	if err := checkBatch(batch); err != nil {
		return 0, nil, err
	}
	if len(batch.Z) != batch.B*batch.D {
		return 0, nil, fmt.Errorf("cpu: batch has %d targets, want %d", len(batch.Z), batch.B*batch.D)
	}
	workers = max(1, min(workers, batch.B))
	states := make([]*trainState, workers)
	losses := make([]float64, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for k := range states {
		states[k] = &trainState{g: gradSet{}, boxes: map[*box]*boxGrad{}}
		wg.Add(1)
		go func() {
			defer wg.Done()
			losses[k], errs[k] = n.lossGradTasks(ctx, states[k], batch, k, workers, fn)
		}()
	}
	wg.Wait()
	for k := range states {
		if errs[k] != nil {
			return 0, nil, errs[k]
		}
		loss += losses[k]
		for _, bg := range states[k].boxes {
			bg.finish(states[k].g)
		}
	}
	for _, t := range n.decl.Tensors() {
		sum := states[0].g.of(t)
		for _, s := range states[1:] {
			addTo(sum, s.g.of(t))
		}
		grads = append(grads, sum)
	}
	return loss, grads, nil
}

// lossGradTasks runs tasks first, first+step, … of batch into s and
// returns their share of the loss.
func (n *Net) lossGradTasks(ctx context.Context, s *trainState, batch *arch.Batch, first, step int, fn taskGradFunc) (float64, error) {
	w := &workspace{}
	d := batch.D
	var loss float64
	for b := first; b < batch.B; b += step {
		t, err := locate(w, batch, b)
		if err != nil {
			return 0, fmt.Errorf("cpu: %w", err)
		}
		lq, err := fn(ctx, w, s, batch, t, -1/float64(d*batch.B))
		if err != nil {
			return 0, fmt.Errorf("cpu: task %d: %w", b, err)
		}
		loss -= lq / float64(d*batch.B)
	}
	return loss, nil
}

// taskGrad runs one task forward and backward, adding dlq·∂log q/∂θ to
// the gradients, and returns log q at the task's target.
func (n *Net) taskGrad(ctx context.Context, w *workspace, s *trainState, batch *arch.Batch, t task, dlq float64) (float64, error) {
	d := batch.D
	K, err := n.trainEncode(ctx, w, s, batch, t)
	if err != nil {
		return 0, err
	}
	mean, prec := make([]float32, d), make([]float32, d*d)
	n.decodeGaussian(w, d, mean, prec)
	lq, dmu, dlam, err := gaussLogQGrad(mean, prec, batch.Z[t.b*d:(t.b+1)*d], dlq)
	if err != nil {
		return 0, err
	}
	dPool, dXPool := n.decoderBackward(w, s, d, dmu, dlam)
	return lq, n.backFromPool(ctx, w, s, batch, t, K, d, dPool, dXPool)
}

// trainEncode runs adapters, encoder and merge blocks on one task,
// saving activations, and returns the token count.
func (n *Net) trainEncode(ctx context.Context, w *workspace, s *trainState, batch *arch.Batch, t task) (int, error) {
	c, d := n.cfg.C, batch.D
	K := 1 + len(t.sites)
	w.x, w.p = grow(w.x, K*d*c), grow(w.p, K*d*d*c)
	if err := n.adapters(ctx, w, batch, t); err != nil {
		return 0, err
	}
	return K, n.trainForward(ctx, w, &s.sv, K, d)
}

// backFromPool backpropagates the pooled tokens' gradients through
// pooling, merge blocks, encoder and adapters.
func (n *Net) backFromPool(ctx context.Context, w *workspace, s *trainState, batch *arch.Batch, t task, K, d int, dPool, dXPool []float32) error {
	c := n.cfg.C
	s.gP, s.gX = grow(s.gP, K*d*d*c), grow(s.gX, K*d*c)
	symInPlace(dPool, d, c)
	for k := 0; k < K; k++ {
		copy(s.gP[k*d*d*c:(k+1)*d*d*c], dPool)
		copy(s.gX[k*d*c:(k+1)*d*c], dXPool)
	}
	for bi := len(n.merge) - 1; bi >= 0; bi-- {
		if err := n.blockBackward(ctx, w, s, bi, K, d); err != nil {
			return err
		}
	}
	for l := len(n.encoder) - 1; l >= 0; l-- {
		s.tP = keep(s.tP, s.gP)
		symInPlace(s.tP, d, c)
		s.tX = keep(s.tX, s.gX)
		in := boxBackIn{boxIn: boxIn{p: s.sv.encP[l], x: s.sv.encX[l], k: K, d: d},
			gOutP: s.tP, gOutX: s.tX, gInP: s.gP, gInX: s.gX}
		if err := n.boxBackward(ctx, w, &s.gw, n.encoder[l], s.box(n.encoder[l]), in); err != nil {
			return err
		}
	}
	n.adaptersBackward(s, batch, t, d)
	return nil
}

// gaussLogQGrad returns log N(z; μ, Λ⁻¹) and dlq times its gradients
// with respect to μ and Λ (entry-wise, Λ symmetric): Λr and
// ½Λ⁻¹ − ½rrᵀ, in float64.
func gaussLogQGrad(mu, lam, z []float32, dlq float64) (lq float64, dmu, dlam []float64, err error) {
	d := len(mu)
	L := make([]float64, d*d)
	for i := 0; i < d; i++ {
		for j := 0; j <= i; j++ {
			s := 0.5 * (float64(lam[i*d+j]) + float64(lam[j*d+i]))
			for k := 0; k < j; k++ {
				s -= L[i*d+k] * L[j*d+k]
			}
			if i == j {
				if s <= 0 {
					return 0, nil, nil, fmt.Errorf("precision not positive definite")
				}
				L[i*d+i] = math.Sqrt(s)
			} else {
				L[i*d+j] = s / L[j*d+j]
			}
		}
	}
	inv := make([]float64, d*d) // Λ⁻¹ column by column: solve L Lᵀ x = e_j
	for j := 0; j < d; j++ {
		x := make([]float64, d)
		x[j] = 1
		for i := 0; i < d; i++ {
			for k := 0; k < i; k++ {
				x[i] -= L[i*d+k] * x[k]
			}
			x[i] /= L[i*d+i]
		}
		for i := d - 1; i >= 0; i-- {
			for k := i + 1; k < d; k++ {
				x[i] -= L[k*d+i] * x[k]
			}
			x[i] /= L[i*d+i]
		}
		for i := 0; i < d; i++ {
			inv[i*d+j] = x[i]
		}
	}
	r := make([]float64, d)
	for i := range r {
		r[i] = float64(z[i]) - float64(mu[i])
	}
	dmu, dlam = make([]float64, d), make([]float64, d*d)
	var quad, logdet float64
	for i := 0; i < d; i++ {
		logdet += 2 * math.Log(L[i*d+i])
		var lr float64
		for j := 0; j < d; j++ {
			lr += float64(lam[i*d+j]) * r[j]
			dlam[i*d+j] = dlq * 0.5 * (inv[i*d+j] - r[i]*r[j])
		}
		quad += r[i] * lr
		dmu[i] = dlq * lr
	}
	lq = 0.5*(logdet-quad) - 0.5*float64(d)*math.Log(2*math.Pi)
	return lq, dmu, dlam, nil
}

// decoderBackward backpropagates dmu, dlam through the Gaussian decoder
// to the pooled tokens: it returns their gradients (d×d×C, d×C).
func (n *Net) decoderBackward(w *workspace, s *trainState, d int, dmu, dlam []float64) (dPool, dXPool []float32) {
	c, g := n.cfg.C, n.gaussian
	so := 0.5 * n.cfg.OffdiagMul
	dA := make([]float64, d*d)
	de := make([]float32, d)
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			if i != j {
				a := so * (float64(w.dec1[i*d+j]) + float64(w.dec1[j*d+i]))
				sg := 0.0
				if a > 0 {
					sg = 1
				} else if a < 0 {
					sg = -1
				}
				dA[i*d+j] = dlam[i*d+j] + sg*dlam[i*d+i]
			}
		}
		e := float64(w.dec2[i])
		de[i] = float32(dlam[i*d+i] / (1 + math.Exp(-e)))
	}
	doff := make([]float32, d*d)
	dm := make([]float32, d)
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			if i != j {
				doff[i*d+j] = float32(so * (dA[i*d+j] + dA[j*d+i]))
			}
		}
		dm[i] = float32(dmu[i])
	}
	dPool, dXPool = make([]float32, d*d*c), make([]float32, d*c)
	tmp := make([]float32, d*c)
	drich := make([]float32, d*5*c)
	g.offdiag.backward(&s.gw, w.poolP, d*d, doff, dPool, s.g.mlpGradOf(g.offdiag))
	g.diag.backward(&s.gw, w.poolX, d, de, tmp, s.g.mlpGradOf(g.diag))
	addTo(dXPool, tmp)
	g.mean.backward(&s.gw, w.rich, d, dm, drich, s.g.mlpGradOf(g.mean))
	richBackward(drich, dPool, dXPool, d, c)
	return dPool, dXPool
}

// richBackward spreads the gradient of the rich features
// [X_i, ½(row_i+col_i), diag_i, gN, gP] onto the pooled tokens.
func richBackward(drich, dP, dX []float32, d, c int) {
	inv, inv2 := 1/float32(d), 1/float32(d*d)
	sN, sP := make([]float32, c), make([]float32, c)
	for i := 0; i < d; i++ {
		r := drich[i*5*c : (i+1)*5*c]
		addTo(dX[i*c:(i+1)*c], r[:c])
		addTo(dP[(i*d+i)*c:(i*d+i+1)*c], r[2*c:3*c])
		addTo(sN, r[3*c:4*c])
		addTo(sP, r[4*c:5*c])
		for j := 0; j < d; j++ {
			a, b := dP[(i*d+j)*c:(i*d+j+1)*c], dP[(j*d+i)*c:(j*d+i+1)*c]
			for ch := 0; ch < c; ch++ {
				v := 0.5 * r[c+ch] * inv
				a[ch] += v
				b[ch] += v
			}
		}
	}
	for i := 0; i < d; i++ {
		for ch := 0; ch < c; ch++ {
			dX[i*c+ch] += sN[ch] * inv
		}
	}
	for ij := 0; ij < d*d; ij++ {
		for ch := 0; ch < c; ch++ {
			dP[ij*c+ch] += sP[ch] * inv2
		}
	}
}

// symResidual turns s.gP (the gradient of sym(P + sym(D))) into the
// gradient of P and leaves the raw branch gradients in s.tP, s.tX.
func (s *trainState) symResidual(d, c int) {
	symInPlace(s.gP, d, c)
	s.tP = keep(s.tP, s.gP)
	s.tX = keep(s.tX, s.gX)
}

// blockBackward backpropagates one merge block: FFN, output map,
// attention, and the Q, K, V maps.
func (n *Net) blockBackward(ctx context.Context, w *workspace, s *trainState, bi, K, d int) error {
	c := n.cfg.C
	blk, bs := &n.merge[bi], &s.sv.blocks[bi]
	s.symResidual(d, c)
	ffn := boxBackIn{boxIn: boxIn{p: bs.p2, x: bs.x2, k: K, d: d, lnP: &blk.lnFFNPair, lnX: &blk.lnFFNNode},
		gOutP: s.tP, gOutX: s.tX, gInP: s.gP, gInX: s.gX, lgP: s.ln(&blk.lnFFNPair), lgX: s.ln(&blk.lnFFNNode)}
	if err := n.boxBackward(ctx, w, &s.gw, blk.ffn, s.box(blk.ffn), ffn); err != nil {
		return err
	}
	s.symResidual(d, c)
	s.gMP, s.gMX = grow(s.gMP, K*d*d*c), grow(s.gMX, K*d*c)
	clear(s.gMP)
	clear(s.gMX)
	out := boxBackIn{boxIn: boxIn{p: bs.mp, x: bs.mx, k: K, d: d}, gOutP: s.tP, gOutX: s.tX, gInP: s.gMP, gInX: s.gMX}
	if err := n.boxBackward(ctx, w, &s.gw, blk.out, s.box(blk.out), out); err != nil {
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
		if err := n.boxBackward(ctx, w, &s.gw, m.b, s.box(m.b), in); err != nil {
			return err
		}
	}
	return nil
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

// adaptersBackward backpropagates the token gradients into the adapter
// MLPs (the descriptors are inputs: no gradient further).
func (n *Net) adaptersBackward(s *trainState, batch *arch.Batch, t task, d int) {
	c, b := n.cfg.C, t.b
	s.tP = keep(s.tP, s.gP)
	symInPlace(s.tP, d, c) // the pair outputs were symmetrised
	f := t.prior
	wn, wp := arch.PriorNodeWidth[f], arch.PriorPairWidth[f]
	ad := n.prior[f]
	ad.node.backward(&s.gw, batch.PriorNode[f][b*d*wn:(b+1)*d*wn], d, s.gX[:d*c], nil, s.g.mlpGradOf(ad.node))
	ad.pair.backward(&s.gw, batch.PriorPair[f][b*d*d*wp:(b+1)*d*d*wp], d*d, s.tP[:d*d*c], nil, s.g.mlpGradOf(ad.pair))
	for i := 0; i < len(t.sites); {
		e := i + 1
		for e < len(t.sites) && t.fams[e] == t.fams[i] && t.sites[e] == t.sites[e-1]+1 {
			e++
		}
		f := t.fams[i]
		tok := b*batch.NPad + t.sites[i]
		wn, wp := arch.LikNodeWidth[f], arch.LikPairWidth[f]
		k0, k1 := 1+i, 1+e
		ad := n.lik[f]
		ad.node.backward(&s.gw, batch.LikNode[f][tok*d*wn:(tok+e-i)*d*wn], (e-i)*d, s.gX[k0*d*c:k1*d*c], nil, s.g.mlpGradOf(ad.node))
		ad.pair.backward(&s.gw, batch.LikPair[f][tok*d*d*wp:(tok+e-i)*d*d*wp], (e-i)*d*d, s.tP[k0*d*d*c:k1*d*d*c], nil, s.g.mlpGradOf(ad.pair))
		i = e
	}
}
