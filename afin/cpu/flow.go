package cpu

import (
	"context"
	"fmt"
	"math"

	"github.com/afin-bench/afin/afin/arch"
	"github.com/afin-bench/afin/internal/gemm"
)

// coupling is one packed flow coupling. The first layers of the node and
// pair conditioner streams are split by input part: the context part
// (and, for the pair stream, the constant mask channels) is computed once
// per task, the sample-dependent part (symlog of the kept coordinates) is
// a rank-one update per sample.
type coupling struct {
	nodeCtx, pairCtx *gemm.Packed // context rows of the first layers, with bias
	nodeX, nodeM     []float32    // node first-layer rows for symlog(x_i), symlog(m_i)
	pairXi, pairXj   []float32    // pair first-layer rows for symlog(x_i), symlog(x_j)
	pairConst        []float32    // pair first-layer rows (4×H) for the mask channels
	node, pair       *mlp         // layers[0] unused: replaced by the split above
	box              *box
	head             *mlp
	h                int
	decl             arch.Coupling
}

type flowDec struct {
	ctxNode, ctxPair, affine *mlp
	couplings                []coupling
	g                        int
}

func packFlow(f *arch.FlowDecoder, g int) (*flowDec, error) {
	fd := &flowDec{g: g}
	var err error
	if fd.ctxNode, err = packMLP(f.ContextNode); err != nil {
		return nil, err
	}
	if fd.ctxPair, err = packMLP(f.ContextPair); err != nil {
		return nil, err
	}
	if fd.affine, err = packMLP(f.Affine); err != nil {
		return nil, err
	}
	for _, cp := range f.Couplings {
		c, err := packCoupling(cp, g)
		if err != nil {
			return nil, err
		}
		fd.couplings = append(fd.couplings, c)
	}
	return fd, nil
}

func packCoupling(cp arch.Coupling, g int) (coupling, error) {
	c := coupling{decl: cp}
	var err error
	if len(cp.Node.Layers) < 2 || len(cp.Pair.Layers) < 2 {
		return c, fmt.Errorf("flow coupling MLPs need ≥ 2 layers")
	}
	nl, pl := cp.Node.Layers[0], cp.Pair.Layers[0]
	c.h = nl.Out()
	if pl.Out() != c.h || nl.In() != g+2 || pl.In() != g+6 {
		return c, fmt.Errorf("flow coupling first layers %v, %v do not fit G=%d", nl.W.Shape, pl.W.Shape, g)
	}
	rows := func(w []float32, from, to int) []float32 { return w[from*c.h : to*c.h] }
	if c.nodeCtx, err = gemm.Pack(rows(nl.W.Data, 0, g), g, c.h, nl.B.Data); err != nil {
		return c, err
	}
	if c.pairCtx, err = gemm.Pack(rows(pl.W.Data, 0, g), g, c.h, pl.B.Data); err != nil {
		return c, err
	}
	c.nodeX, c.nodeM = rows(nl.W.Data, g, g+1), rows(nl.W.Data, g+1, g+2)
	c.pairXi, c.pairXj, c.pairConst = rows(pl.W.Data, g, g+1), rows(pl.W.Data, g+1, g+2), rows(pl.W.Data, g+2, g+6)
	if c.node, err = packMLP(cp.Node); err != nil {
		return c, err
	}
	if c.pair, err = packMLP(cp.Pair); err != nil {
		return c, err
	}
	if c.box, err = packBox(cp.Box, g); err != nil {
		return c, err
	}
	c.head, err = packMLP(cp.Head)
	return c, err
}

func symlog32(x float32) float32 {
	if x < 0 {
		return float32(-math.Log1p(-float64(x)))
	}
	return float32(math.Log1p(float64(x)))
}

func boundScale(x float32) float32 {
	return float32(arch.FlowMaxLogScale * math.Tanh(float64(x)/arch.FlowMaxLogScale))
}

// flowWS holds the flow decoder's buffers for one task.
type flowWS struct {
	nodeIn, cNode, cPair, aff, tau, ell []float32
	cn, cp                              [][]float32 // per coupling: context part of the first layers
	x, xk, sx, shift, ls                []float32   // per sample chunk (ns×d)
	hn, hp, h2, node, pair, head        []float32
}

// samplesPerChunk bounds the pair-stream rows (samples × d²) processed
// together.
func samplesPerChunk(d int) int { return max(1, 1024/(d*d)) }

// flowContext computes the per-task conditioning from the pooled tokens:
// node and pair contexts, the final affine's shift and bounded log-scale,
// and every coupling's sample-independent first-layer terms.
func (n *Net) flowContext(w *workspace, d int) {
	fd, f, c := n.flow, &w.flow, n.cfg.C
	g := fd.g
	n.richFeatures(w, d)
	f.nodeIn = grow(f.nodeIn, d*3*c)
	for i := 0; i < d; i++ {
		copy(f.nodeIn[i*3*c:(i+1)*3*c], w.rich[i*5*c:i*5*c+3*c])
	}
	f.cNode, f.cPair, f.aff = grow(f.cNode, d*g), grow(f.cPair, d*d*g), grow(f.aff, d*2)
	fd.ctxNode.run(w, f.cNode, f.nodeIn, d)
	fd.ctxPair.run(w, f.cPair, w.poolP, d*d)
	symInPlace(f.cPair, d, g)
	fd.affine.run(w, f.aff, w.rich, d)
	f.tau, f.ell = grow(f.tau, d), grow(f.ell, d)
	for i := 0; i < d; i++ {
		f.tau[i], f.ell[i] = f.aff[2*i], boundScale(f.aff[2*i+1])
	}
	for len(f.cn) < len(fd.couplings) {
		f.cn, f.cp = append(f.cn, nil), append(f.cp, nil)
	}
	for t := range fd.couplings {
		cp := &fd.couplings[t]
		m := arch.FlowMask(d, t)
		f.cn[t], f.cp[t] = grow(f.cn[t], d*cp.h), grow(f.cp[t], d*d*cp.h)
		w.mul(cp.nodeCtx, f.cn[t], cp.h, f.cNode, g, d, gemm.WithBias)
		w.mul(cp.pairCtx, f.cp[t], cp.h, f.cPair, g, d*d, gemm.WithBias)
		for i := 0; i < d; i++ {
			axpy(f.cn[t][i*cp.h:(i+1)*cp.h], symlog32(m[i]), cp.nodeM)
			for j := 0; j < d; j++ {
				ch := [4]float32{symlog32(m[i]), symlog32(m[j]), symlog32(m[i] * m[j]), 0}
				if i == j {
					ch[3] = symlog32(1)
				}
				row := f.cp[t][(i*d+j)*cp.h : (i*d+j+1)*cp.h]
				for k, v := range ch {
					axpy(row, v, cp.pairConst[k*cp.h:(k+1)*cp.h])
				}
			}
		}
	}
}

// axpy adds a·x to y.
func axpy(y []float32, a float32, x []float32) {
	for i, v := range x {
		y[i] += a * v
	}
}

// condition evaluates coupling t's conditioner on the kept coordinates of
// ns samples (f.xk, ns×d) and leaves the shifts in f.shift and bounded
// log-scales in f.ls.
func (n *Net) condition(ctx context.Context, w *workspace, t, ns, d int) error {
	fd, f := n.flow, &w.flow
	cp, g := &fd.couplings[t], fd.g
	h := cp.h
	f.sx = grow(f.sx, ns*d)
	for i, v := range f.xk[:ns*d] {
		f.sx[i] = symlog32(v)
	}
	rows := ns * d * d
	f.hn, f.hp = grow(f.hn, ns*d*h), grow(f.hp, rows*h)
	f.h2 = grow(f.h2, rows*max(h, cp.pair.hidden, cp.node.hidden))
	for s := 0; s < ns; s++ {
		for i := 0; i < d; i++ {
			r := f.hn[(s*d+i)*h : (s*d+i+1)*h]
			copy(r, f.cn[t][i*h:(i+1)*h])
			axpy(r, f.sx[s*d+i], cp.nodeX)
			for j := 0; j < d; j++ {
				q := f.hp[((s*d+i)*d+j)*h : ((s*d+i)*d+j+1)*h]
				copy(q, f.cp[t][(i*d+j)*h:(i*d+j+1)*h])
				axpy(q, f.sx[s*d+i], cp.pairXi)
				axpy(q, f.sx[s*d+j], cp.pairXj)
			}
		}
	}
	gemm.SiLU(f.hn)
	gemm.SiLU(f.hp)
	f.node, f.pair = grow(f.node, ns*d*g), grow(f.pair, rows*g)
	cp.node.tail(w, f.node, f.hn, f.h2, ns*d)
	cp.pair.tail(w, f.pair, f.hp, f.h2, rows)
	in := boxIn{p: f.pair, x: f.node, k: ns, d: d, nodeOnly: true}
	err := n.runBox(ctx, w, cp.box, in, func(k0, k1 int, _, dX []float32) {
		addTo(f.node[k0*d*g:k1*d*g], dX)
	})
	if err != nil {
		return err
	}
	f.head, f.shift, f.ls = grow(f.head, ns*d*2), grow(f.shift, ns*d), grow(f.ls, ns*d)
	cp.head.run(w, f.head, f.node, ns*d)
	for i := 0; i < ns*d; i++ {
		f.shift[i], f.ls[i] = f.head[2*i], boundScale(f.head[2*i+1])
	}
	return nil
}

// FlowSample maps base draws eps (B×S×d, standard normal) through each
// task's flow (at full strength, as at inference) and returns the draws z
// (B×S×d) and their log q (B×S). It checks ctx between layers.
func (n *Net) FlowSample(ctx context.Context, batch *arch.Batch, eps []float32, S int) (z, logq []float32, err error) {
	z = make([]float32, len(eps))
	logq = make([]float32, batch.B*S)
	err = n.flowEach(ctx, batch, eps, S, func(w *workspace, b, s0, ns, d int) error {
		f := &w.flow
		x := f.x[:ns*d]
		copy(x, eps[(b*S+s0)*d:])
		lq := logq[b*S+s0 : b*S+s0+ns]
		for s := range lq {
			lq[s] = stdNormalLogPDF(x[s*d : (s+1)*d])
		}
		for t := range n.flow.couplings {
			m := arch.FlowMask(d, t)
			if err := n.step(ctx, w, t, m, ns, d); err != nil {
				return err
			}
			for i, v := range x {
				if m[i%d] == 0 {
					x[i] = v*float32(math.Exp(float64(f.ls[i]))) + f.shift[i]
					lq[i/d] -= f.ls[i]
				}
			}
		}
		for i, v := range x {
			z[(b*S+s0)*d+i] = v*float32(math.Exp(float64(f.ell[i%d]))) + f.tau[i%d]
			lq[i/d] -= f.ell[i%d]
		}
		return nil
	})
	return z, logq, err
}

// FlowLogQ returns log q(z) (B×S) of points z (B×S×d) under each task's
// flow, by inverting it. It checks ctx between layers.
func (n *Net) FlowLogQ(ctx context.Context, batch *arch.Batch, z []float32, S int) (logq []float32, err error) {
	logq = make([]float32, batch.B*S)
	err = n.flowEach(ctx, batch, z, S, func(w *workspace, b, s0, ns, d int) error {
		f := &w.flow
		v := f.x[:ns*d]
		lq := logq[b*S+s0 : b*S+s0+ns]
		for i := range v {
			v[i] = (z[(b*S+s0)*d+i] - f.tau[i%d]) * float32(math.Exp(-float64(f.ell[i%d])))
			lq[i/d] -= f.ell[i%d]
		}
		for t := len(n.flow.couplings) - 1; t >= 0; t-- {
			m := arch.FlowMask(d, t)
			if err := n.step(ctx, w, t, m, ns, d); err != nil {
				return err
			}
			for i, e := range v {
				if m[i%d] == 0 {
					v[i] = (e - f.shift[i]) * float32(math.Exp(-float64(f.ls[i])))
					lq[i/d] -= f.ls[i]
				}
			}
		}
		for s := range lq {
			lq[s] += stdNormalLogPDF(v[s*d : (s+1)*d])
		}
		return nil
	})
	return logq, err
}

// step masks the current points (f.x) with m into f.xk and runs coupling
// t's conditioner on them.
func (n *Net) step(ctx context.Context, w *workspace, t int, m []float32, ns, d int) error {
	f := &w.flow
	f.xk = grow(f.xk, ns*d)
	for i, v := range f.x[:ns*d] {
		f.xk[i] = v * m[i%d]
	}
	return n.condition(ctx, w, t, ns, d)
}

// flowEach encodes every task of batch, computes its flow context and
// calls fn on each chunk of its S points (pts is B×S×d).
func (n *Net) flowEach(ctx context.Context, batch *arch.Batch, pts []float32, S int,
	fn func(w *workspace, b, s0, ns, d int) error) error {
	if n.flow == nil {
		return fmt.Errorf("cpu: network has no flow decoder (decoder %q)", n.cfg.Decoder)
	}
	if err := checkBatch(batch); err != nil {
		return err
	}
	d := batch.D
	if S < 1 || len(pts) != batch.B*S*d {
		return fmt.Errorf("cpu: %d values for %d tasks × %d points × d=%d", len(pts), batch.B, S, d)
	}
	w, _ := n.pool.Get().(*workspace)
	if w == nil {
		w = &workspace{}
	}
	defer n.pool.Put(w)
	for b := 0; b < batch.B; b++ {
		t, err := locate(w, batch, b)
		if err != nil {
			return fmt.Errorf("cpu: %w", err)
		}
		if err := n.encode(ctx, w, batch, t); err != nil {
			return fmt.Errorf("cpu: task %d: %w", b, err)
		}
		n.flowContext(w, d)
		sc := samplesPerChunk(d)
		w.flow.x = grow(w.flow.x, sc*d)
		for s0 := 0; s0 < S; s0 += sc {
			if err := fn(w, b, s0, min(sc, S-s0), d); err != nil {
				return fmt.Errorf("cpu: task %d: %w", b, err)
			}
		}
	}
	return nil
}

func stdNormalLogPDF(x []float32) float32 {
	var q float64
	for _, v := range x {
		q += float64(v) * float64(v)
	}
	return float32(-0.5*q - 0.5*float64(len(x))*math.Log(2*math.Pi))
}
