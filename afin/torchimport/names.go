package torchimport

import (
	"fmt"
	"sort"

	"github.com/afin-bench/afin/afin/arch"
)

// The authors' code names the likelihood families differently from the
// paper (and afin); priors share names.
var (
	codeLik = map[string]string{ // afin (paper) name → authors' code name
		"lin_gaussian": "gaussian", "bernoulli_logit": "bernoulli_logit", "binomial_logit": "binomial_logit",
		"lin_student_t": "student_t", "gaussian": "gaussian_no_x",
	}
)

// paperLik maps an authors' likelihood name to afin's.
func paperLik(code string) (string, bool) {
	for p, c := range codeLik {
		if c == code {
			return p, true
		}
	}
	return "", false
}

// target is where one of the authors' tensors goes: an afin tensor, and
// whether it is a Linear weight stored (out, in) by PyTorch.
type target struct {
	t         *arch.Tensor
	transpose bool
}

// mapping walks the typed declaration and names, for every afin tensor,
// the authors' state-dict key that holds it. Their MLPs are
// nn.Sequential with SiLU modules between the Linears, so linear k is
// item 2k.
type mapping map[string]target

func (m mapping) mlp(prefix string, mlp arch.MLP) {
	for k, l := range mlp.Layers {
		m[fmt.Sprintf("%s.mlp.%d.weight", prefix, 2*k)] = target{l.W, true}
		m[fmt.Sprintf("%s.mlp.%d.bias", prefix, 2*k)] = target{l.B, false}
	}
}

// box maps a BoxMLP whose branches are called pairName and nodeName
// ("pair_refine"/"node_refine" for residual layers, "pair_map"/"node_map"
// for the attention maps).
func (m mapping) box(prefix string, b arch.BoxMLP, pairName, nodeName string) {
	m.mlp(prefix+"."+pairName, b.Pair)
	m.mlp(prefix+"."+nodeName, b.Node)
}

func (m mapping) layerNorm(prefix string, ln arch.LayerNorm) {
	m[prefix+".weight"] = target{ln.G, false}
	m[prefix+".bias"] = target{ln.B, false}
}

// mapNetwork returns the authors' key of every tensor of net.
func mapNetwork(net *arch.Network) mapping {
	m := mapping{}
	for f, a := range net.PriorAdapter {
		name := arch.PriorFamilies[f]
		m.mlp("adapter.prior_node_nets."+name, a.Node)
		m.mlp("adapter.prior_pair_nets."+name, a.Pair)
	}
	for f, a := range net.LikAdapter {
		name := codeLik[arch.LikFamilies[f]]
		m.mlp("adapter.like_node_nets."+name, a.Node)
		m.mlp("adapter.like_pair_nets."+name, a.Pair)
	}
	for l, b := range net.Encoder {
		m.box(fmt.Sprintf("encoder.layers.%d", l), b, "pair_refine", "node_refine")
	}
	for i, b := range net.Merge {
		p := fmt.Sprintf("merge.blocks.%d", i)
		m[p+".score_mix_logits"] = target{b.Mix, false}
		m.layerNorm(p+".node_attn_norm", b.LNAttnNode)
		m.layerNorm(p+".pair_attn_norm", b.LNAttnPair)
		m.layerNorm(p+".node_ffn_norm", b.LNFFNNode)
		m.layerNorm(p+".pair_ffn_norm", b.LNFFNPair)
		m.box(p+".q_map", b.Q, "pair_map", "node_map")
		m.box(p+".k_map", b.K, "pair_map", "node_map")
		m.box(p+".v_map", b.V, "pair_map", "node_map")
		m.box(p+".out_map", b.Out, "pair_map", "node_map")
		m.box(p+".ffn", b.FFN, "pair_refine", "node_refine")
	}
	if g := net.Gaussian; g != nil {
		m.mlp("decoder.offdiag_head", g.Offdiag)
		m.mlp("decoder.diag_head", g.Diag)
		m.mlp("decoder.mean_head", g.Mean)
	}
	if f := net.Flow; f != nil {
		m.mlp("flow_context_proj.node_proj", f.ContextNode)
		m.mlp("flow_context_proj.pair_proj", f.ContextPair)
		m.mlp("flow_affine.head", f.Affine)
		for t, c := range f.Couplings {
			p := fmt.Sprintf("flow.steps.%d", t)
			m.mlp(p+".node_proj", c.Node)
			m.mlp(p+".pair_proj", c.Pair)
			m.box(p+".box", c.Box, "pair_refine", "node_refine")
			m.mlp(p+".param_head", c.Head)
		}
	}
	return m
}

// Key is one entry of the authors' state dict for an afin tensor.
type Key struct {
	Torch     string       // the authors' state-dict key
	Tensor    *arch.Tensor // afin's tensor
	Transpose bool         // PyTorch stores this Linear weight (out, in)
}

// Keys lists, sorted by key, the authors' state-dict entry of every
// tensor of net (tests build run directories from it).
func Keys(net *arch.Network) []Key {
	var out []Key
	for k, t := range mapNetwork(net) {
		out = append(out, Key{Torch: k, Tensor: t.t, Transpose: t.transpose})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Torch < out[j].Torch })
	return out
}
