package cpu

import (
	"fmt"
	"sync"

	"github.com/afin-bench/afin/afin/arch"
	"github.com/afin-bench/afin/internal/gemm"
)

// mlp is an arch.MLP with packed layers: SiLU between layers, none after
// the last.
type mlp struct {
	decl   arch.MLP // the tensors, for gradients
	layers []*gemm.Packed
	in     int // input width
	out    int // output width
	hidden int // widest hidden layer (0 for one layer)
}

func packMLP(m arch.MLP) (*mlp, error) {
	if len(m.Layers) == 0 {
		return nil, fmt.Errorf("mlp without layers")
	}
	r := &mlp{decl: m, in: m.Layers[0].In(), out: m.Layers[len(m.Layers)-1].Out()}
	for i, l := range m.Layers {
		p, err := gemm.Pack(l.W.Data, l.In(), l.Out(), l.B.Data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", l.W.Name, err)
		}
		r.layers = append(r.layers, p)
		if i < len(m.Layers)-1 {
			r.hidden = max(r.hidden, l.Out())
		}
	}
	return r, nil
}

// box is an arch.BoxMLP with the first layer of each branch split by
// input part (paper's "exact shortcut", DESIGN.md): the pair branch's
// first layer is P_ij·W0 + U_i + V_j, with U_i = [row_i, X_i, gP]·W[1,3,5]
// + b (per token and i) and V_j = [col_j, X_j]·W[2,4] (per token and j),
// so the d² rows multiply C inputs instead of 6C.
type box struct {
	pair, node *mlp // pair.layers[0] is unused: replaced by w0, wU, wV
	w0, wU, wV *gemm.Packed
	c, h       int
	decl       arch.BoxMLP
}

func packBox(b arch.BoxMLP, c int) (*box, error) {
	if len(b.Pair.Layers) < 2 {
		return nil, fmt.Errorf("BoxMLP branches need ≥ 2 layers, got %d", len(b.Pair.Layers))
	}
	r := &box{c: c, h: b.Pair.Layers[0].Out(), decl: b}
	var err error
	if r.pair, err = packMLP(b.Pair); err != nil {
		return nil, err
	}
	if r.node, err = packMLP(b.Node); err != nil {
		return nil, err
	}
	l0 := b.Pair.Layers[0]
	if l0.In() != 6*c {
		return nil, fmt.Errorf("%s: %d inputs, want 6C = %d", l0.W.Name, l0.In(), 6*c)
	}
	rows := func(parts ...int) []float32 { // the C-row chunks of W0, stacked
		var w []float32
		for _, k := range parts {
			w = append(w, l0.W.Data[k*c*r.h:(k+1)*c*r.h]...)
		}
		return w
	}
	if r.w0, err = gemm.Pack(rows(0), c, r.h, nil); err != nil {
		return nil, err
	}
	if r.wU, err = gemm.Pack(rows(1, 3, 5), 3*c, r.h, l0.B.Data); err != nil {
		return nil, err
	}
	if r.wV, err = gemm.Pack(rows(2, 4), 2*c, r.h, nil); err != nil {
		return nil, err
	}
	return r, nil
}

type layerNorm struct {
	g, b []float32
	decl arch.LayerNorm
}

type adapter struct{ node, pair *mlp }

type block struct {
	lnAttnNode, lnAttnPair, lnFFNNode, lnFFNPair layerNorm
	mix                                          [2]float64 // softmax of the score-mix logits
	mixT                                         *arch.Tensor
	q, k, v, out, ffn                            *box
}

type gaussDec struct{ offdiag, diag, mean *mlp }

// Net is the AFIN forward pass on the CPU over packed weights. It is safe
// for concurrent use: weights are read-only and each call takes its own
// workspace from a pool. Each call runs on the calling goroutine.
type Net struct {
	cfg      arch.Config
	decl     *arch.Network // tensor order of gradients
	prior    []adapter
	lik      []adapter
	encoder  []*box
	merge    []block
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
		n.merge = append(n.merge, blk)
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
