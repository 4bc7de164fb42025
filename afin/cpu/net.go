package cpu

import (
	"context"
	"fmt"
	"sync"

	"github.com/afin-bench/afin/afin/arch"
)

// The packed network and the pipeline that chains the paper's blocks
// for one task (embed: Encoding, Merge, Pooling; embedBackward), shared
// by inference and training.

// Net is the AFIN forward pass on the CPU over packed weights. It is safe
// for concurrent use: weights are read-only and each call takes its own
// workspace from a pool. Each call runs on the calling goroutine.
type Net struct {
	cfg      arch.Config
	decl     *arch.Network // tensor order of gradients
	prior    []adapter
	lik      []adapter
	encoder  []*box
	blocks   []block
	gaussian *gaussDec
	flow     *flowDec

	pool sync.Pool // *workspace
}

// NewNet packs the weights of net (every tensor must hold data). Later
// changes to net's tensors are not seen: the weights are copied.
func NewNet(net *arch.Network) (*Net, error) {
	cfg := net.Cfg
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("cpu: %w", err)
	}
	for _, t := range net.Tensors() {
		if len(t.Data) != t.Size() {
			return nil, fmt.Errorf("cpu: tensor %s has %d values, want %d", t.Name, len(t.Data), t.Size())
		}
	}
	n := &Net{cfg: cfg, decl: net}
	if err := n.packAll(net); err != nil {
		return nil, fmt.Errorf("cpu: %w", err)
	}
	return n, nil
}

func (n *Net) packAll(net *arch.Network) error {
	packAd := func(a arch.Adapter) (adapter, error) {
		node, err := packMLP(a.Node)
		if err != nil {
			return adapter{}, err
		}
		pair, err := packMLP(a.Pair)
		return adapter{node: node, pair: pair}, err
	}
	for _, a := range net.PriorAdapter {
		ad, err := packAd(a)
		if err != nil {
			return err
		}
		n.prior = append(n.prior, ad)
	}
	for _, a := range net.LikAdapter {
		ad, err := packAd(a)
		if err != nil {
			return err
		}
		n.lik = append(n.lik, ad)
	}
	for _, e := range net.Encoder {
		b, err := packBox(e, n.cfg.C)
		if err != nil {
			return err
		}
		n.encoder = append(n.encoder, b)
	}
	for _, m := range net.Merge {
		blk, err := packBlock(m, n.cfg.C)
		if err != nil {
			return err
		}
		n.blocks = append(n.blocks, blk)
	}
	if f := net.Flow; f != nil {
		var err error
		if n.flow, err = packFlow(f, n.cfg.FlowG); err != nil {
			return err
		}
	}
	if g := net.Gaussian; g != nil {
		var err error
		n.gaussian = &gaussDec{}
		if n.gaussian.offdiag, err = packMLP(g.Offdiag); err != nil {
			return err
		}
		if n.gaussian.diag, err = packMLP(g.Diag); err != nil {
			return err
		}
		if n.gaussian.mean, err = packMLP(g.Mean); err != nil {
			return err
		}
	}
	return nil
}

// NewNetFromData declares cfg's network, points its tensors at data (in
// arch.Network.Tensors order, as checkpoints and afin.Model hold them)
// and packs it.
func NewNetFromData(cfg arch.Config, data [][]float32) (*Net, error) {
	net, err := arch.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("cpu: %w", err)
	}
	if err := net.SetData(data); err != nil {
		return nil, fmt.Errorf("cpu: %w", err)
	}
	return NewNet(net)
}

// Flow reports whether the network decodes with the flow (else the
// Gaussian).
func (n *Net) Flow() bool { return n.flow != nil }

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

func checkBatch(b *arch.Batch) error {
	if b == nil || b.B < 1 || b.D < 1 || b.NPad < 0 {
		return fmt.Errorf("cpu: empty batch")
	}
	if len(b.PriorMask) != b.B*len(arch.PriorFamilies) || len(b.LikMask) != b.B*b.NPad*len(arch.LikFamilies) {
		return fmt.Errorf("cpu: batch masks have the wrong length")
	}
	return nil
}

// taskSave is the training forward's record of one task: what each
// block's backward needs (the inputs of every residual layer; the layers
// recompute the rest).
type taskSave struct {
	encP, encX [][]float32 // encoder layer inputs
	blocks     []blockSave
}

// keep copies src into dst's storage.
func keep(dst, src []float32) []float32 { return append(grow(dst, 0), src...) }

// embed is the paper's pipeline up to the decoder for one task:
// Encoding, the Merge's BoxTransformer blocks and Pooling, leaving the
// task embedding Ē in w.poolX (d×C) and w.poolP (d×d×C); it returns the
// token count K (the prior and the real sites). It is the one native
// forward: with sv nil (inference) nothing is saved, with sv set
// (training) every block saves in sv what its backward needs. It checks
// ctx between layers.
func (n *Net) embed(ctx context.Context, w *workspace, batch *arch.Batch, t task, sv *taskSave) (int, error) {
	d := batch.D
	K := 1 + len(t.sites)
	w.prog.start(progressOf(ctx), w.flops, embedFLOPs(n.cfg, d, len(t.sites)))
	err := n.encoding(ctx, w, batch, t, K, sv)
	if err == nil {
		err = n.merge(ctx, w, K, d, sv)
	}
	if err == nil {
		err = n.pooling(ctx, w, K, d)
	}
	w.prog.finish(err == nil)
	if err != nil {
		return 0, err
	}
	return K, nil
}

// embedBackward is embed's backward: from the gradients of Ē (dPool,
// dXPool, from a decoder's backward) through Pooling, Merge and Encoding
// into the gradients in s, reading what embed saved in s.sv.
func (n *Net) embedBackward(ctx context.Context, w *workspace, s *trainState, batch *arch.Batch, t task, K, d int, dPool, dXPool []float32) error {
	n.poolingBackward(s, dPool, dXPool, K, d)
	if err := n.mergeBackward(ctx, w, s, K, d); err != nil {
		return err
	}
	return n.encodingBackward(ctx, w, s, batch, t, K, d)
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
		if _, err := n.embed(ctx, w, batch, t, nil); err != nil {
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
