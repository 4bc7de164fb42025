package arch

import (
	"fmt"
	"math"
)

// declarer creates tensors in declaration order.
type declarer struct{ out *[]*Tensor }

func (d declarer) tensor(name string, init Init, shape ...int) *Tensor {
	t := &Tensor{Name: name, Shape: shape, Init: init}
	*d.out = append(*d.out, t)
	return t
}

var (
	torchInit = Init{Kind: InitTorch}
	zeroInit  = Init{Kind: InitZero}
)

// mlp declares MLP(in, out, h, l); lastW and lastB initialise the last
// layer (the others use PyTorch's default).
func (d declarer) mlp(prefix string, in, out, h, l int, lastW, lastB Init) MLP {
	m := MLP{Layers: make([]Linear, l)}
	width := in
	for k := range l {
		o, wi, bi := h, torchInit, torchInit
		if k == l-1 {
			o, wi, bi = out, lastW, lastB
		}
		wi.FanIn, bi.FanIn = width, width
		m.Layers[k] = Linear{
			W: d.tensor(fmt.Sprintf("%s/l%d/w", prefix, k), wi, width, o),
			B: d.tensor(fmt.Sprintf("%s/l%d/b", prefix, k), bi, o),
		}
		width = o
	}
	return m
}

// boxMLP declares a BoxMLP on c channels (6c summaries in, out channels).
// zeroLast zero-initialises both branches' last layers, so a residual
// BoxMLP starts as the identity (App. B.1).
func (d declarer) boxMLP(prefix string, c, out, h, l int, zeroLast bool) BoxMLP {
	w, b := torchInit, torchInit
	if zeroLast {
		w, b = zeroInit, zeroInit
	}
	return BoxMLP{
		Pair: d.mlp(prefix+"/pair", 6*c, out, h, l, w, b),
		Node: d.mlp(prefix+"/node", 6*c, out, h, l, w, b),
	}
}

func (d declarer) layerNorm(prefix string, c int) LayerNorm {
	return LayerNorm{G: d.tensor(prefix+"/g", Init{Kind: InitOne}, c), B: d.tensor(prefix+"/b", zeroInit, c)}
}

// declare builds the whole network in the checkpoint order.
func (n *Network) declare() {
	c := n.Cfg
	d := declarer{out: &n.tensors}
	// Adapters: only the last bias starts at zero (App. B.1).
	adapter := func(prefix string, nodeW, pairW int) Adapter {
		return Adapter{
			Node: d.mlp(prefix+"/node", nodeW, c.C, c.AdapterH, c.AdapterL, torchInit, zeroInit),
			Pair: d.mlp(prefix+"/pair", pairW, c.C, c.AdapterH, c.AdapterL, torchInit, zeroInit),
		}
	}
	for f, name := range PriorFamilies {
		n.PriorAdapter = append(n.PriorAdapter, adapter("adapters/prior/"+name, PriorNodeWidth[f], PriorPairWidth[f]))
	}
	for f, name := range LikFamilies {
		n.LikAdapter = append(n.LikAdapter, adapter("adapters/lik/"+name, LikNodeWidth[f], LikPairWidth[f]))
	}
	for l := range c.EncLayers {
		n.Encoder = append(n.Encoder, d.boxMLP(fmt.Sprintf("encoder/%d", l), c.C, c.C, c.BoxH, c.BoxL, true))
	}
	for b := range c.Blocks {
		p := fmt.Sprintf("merge/%d", b)
		blk := MergeBlock{
			LNAttnNode: d.layerNorm(p+"/ln_attn_node", c.C),
			LNAttnPair: d.layerNorm(p+"/ln_attn_pair", c.C),
			LNFFNNode:  d.layerNorm(p+"/ln_ffn_node", c.C),
			LNFFNPair:  d.layerNorm(p+"/ln_ffn_pair", c.C),
		}
		blk.Mix = d.tensor(p+"/mix", zeroInit, 2)
		blk.Q = d.boxMLP(p+"/q", c.C, c.C, c.MergeH, c.MergeL, false)
		blk.K = d.boxMLP(p+"/k", c.C, c.C, c.MergeH, c.MergeL, false)
		blk.V = d.boxMLP(p+"/v", c.C, c.C, c.MergeH, c.MergeL, false)
		blk.Out = d.boxMLP(p+"/out", c.C, c.C, c.MergeH, c.MergeL, true)
		blk.FFN = d.boxMLP(p+"/ffn", c.C, c.C, c.MergeH, c.MergeL, true)
		n.Merge = append(n.Merge, blk)
	}
	if c.Decoder == "flow" {
		n.Flow = n.declareFlow(d)
	} else {
		n.Gaussian = n.declareGaussian(d)
	}
}

func (n *Network) declareGaussian(d declarer) *GaussianDecoder {
	c := n.Cfg
	// softplus(log(e−1)) = 1: the precision diagonal starts near 1.
	diagB := Init{Kind: InitConst, Value: float32(math.Log(math.E - 1))}
	return &GaussianDecoder{
		Offdiag: d.mlp("gaussian_decoder/offdiag", c.C, 1, c.DecH, c.DecL, zeroInit, zeroInit),
		Diag:    d.mlp("gaussian_decoder/diag", c.C, 1, c.DecH, c.DecL, zeroInit, diagB),
		Mean:    d.mlp("gaussian_decoder/mean", 5*c.C, 1, c.DecH, c.DecL, zeroInit, zeroInit),
	}
}

func (n *Network) declareFlow(d declarer) *FlowDecoder {
	c := n.Cfg
	g := c.FlowG
	f := &FlowDecoder{
		ContextNode: d.mlp("flow_context/node", 3*c.C, g, max(c.FlowH, g), c.FlowL, torchInit, torchInit),
		ContextPair: d.mlp("flow_context/pair", c.C, g, max(c.FlowH, g), c.FlowL, torchInit, torchInit),
		Affine:      d.mlp("flow_affine", 5*c.C, 2, max(c.FlowH, 5*c.C), c.FlowL, zeroInit, zeroInit),
	}
	for t := range c.FlowSteps {
		p := fmt.Sprintf("couplings/%d", t)
		f.Couplings = append(f.Couplings, Coupling{
			Node: d.mlp(p+"/node", g+2, g, c.FlowH, c.FlowL, torchInit, torchInit),
			Pair: d.mlp(p+"/pair", g+6, g, c.FlowH, c.FlowL, torchInit, torchInit),
			Box:  d.boxMLP(p+"/box", g, g, c.FlowH, c.FlowL, true),
			Head: d.mlp(p+"/head", g, 2, c.FlowH, c.FlowL, zeroInit, zeroInit),
		})
	}
	return f
}
