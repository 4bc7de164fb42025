package arch

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
)

// InitKind says how a tensor starts.
type InitKind int

const (
	InitTorch InitKind = iota // uniform ±1/sqrt(fan_in), PyTorch's Linear default
	InitZero
	InitOne
	InitConst
)

// Init is a tensor's initialisation rule.
type Init struct {
	Kind  InitKind
	FanIn int     // InitTorch
	Value float32 // InitConst
}

// Tensor is one named trainable array, row-major float32. Linear weights
// are stored (in, out): y = x·W + b.
type Tensor struct {
	Name  string
	Shape []int
	Init  Init
	Data  []float32 // nil until initialised or loaded
}

// Size is the number of scalars in t.
func (t *Tensor) Size() int {
	n := 1
	for _, s := range t.Shape {
		n *= s
	}
	return n
}

// Module is the top-level module t belongs to (its name up to the first
// slash): adapters, encoder, merge, gaussian_decoder, flow_context,
// flow_affine or couplings.
func (t *Tensor) Module() string {
	if i := strings.IndexByte(t.Name, '/'); i >= 0 {
		return t.Name[:i]
	}
	return t.Name
}

// Linear is one affine layer y = x·W + B, W (in, out).
type Linear struct{ W, B *Tensor }

// In is the layer's input width.
func (l Linear) In() int { return l.W.Shape[0] }

// Out is the layer's output width.
func (l Linear) Out() int { return l.W.Shape[1] }

// MLP is MLP(in, out, H, L): Layers[0..L-1] with SiLU between them and no
// output activation (paper eq. (mlp_hidden)).
type MLP struct{ Layers []Linear }

// BoxMLP is one coordinate-wise BoxMLP layer (paper Sec. 3.1, eq.
// (boxmlp); App. B.1): a pair branch applied at every (i, j) and a node
// branch at every i, each acting on 6C summaries of the tokens. Used as
// the encoder's residual layers, the merge blocks' Q/K/V/Out maps and FFN,
// and the flow couplings' refinement.
type BoxMLP struct{ Pair, Node MLP }

// LayerNorm normalises over the channel axis with gain G and bias B.
type LayerNorm struct{ G, B *Tensor }

// LayerNormEps is the LayerNorm epsilon (PyTorch's default).
const LayerNormEps = 1e-5

// Adapter is one factor family's pair of descriptor MLPs (App. B.1,
// "Factor-type adapters").
type Adapter struct{ Node, Pair MLP }

// MergeBlock is one BoxTransformer block (paper Sec. 3.2; App. B.2):
// pre-norm factor-axis attention whose queries, keys, values and output
// are BoxMLP maps, then a BoxMLP feed-forward increment. Mix holds the two
// logits of the node/pair score mix (softmax-normalised).
type MergeBlock struct {
	LNAttnNode, LNAttnPair, LNFFNNode, LNFFNPair LayerNorm
	Mix                                          *Tensor
	Q, K, V, Out, FFN                            BoxMLP
}

// GaussianDecoder maps pooled tokens to a mean and a diagonally dominant
// precision (App. B.3, "Gaussian decoder").
type GaussianDecoder struct{ Offdiag, Diag, Mean MLP }

// Coupling is one conditional affine coupling of the flow decoder:
// node and pair conditioner streams, a BoxMLP refinement and a head giving
// shift and log-scale. Only the node output of Box is used; its pair
// branch exists (and is counted) as in the authors' model, and never
// receives a gradient.
type Coupling struct {
	Node, Pair MLP
	Box        BoxMLP
	Head       MLP
}

// FlowDecoder is the conditional RealNVP decoder (App. B.3, "Flow
// decoder"): context projections, couplings, then a final affine.
type FlowDecoder struct {
	ContextNode, ContextPair MLP
	Affine                   MLP
	Couplings                []Coupling
}

// Network is the whole typed declaration of one configuration.
type Network struct {
	Cfg          Config
	PriorAdapter []Adapter // in PriorFamilies order
	LikAdapter   []Adapter // in LikFamilies order
	Encoder      []BoxMLP
	Merge        []MergeBlock
	Gaussian     *GaussianDecoder // set when Cfg.Decoder == "gaussian"
	Flow         *FlowDecoder     // set when Cfg.Decoder == "flow"

	tensors []*Tensor
}

// New declares the network of cfg (tensors without data).
func New(cfg Config) (*Network, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	n := &Network{Cfg: cfg}
	n.declare()
	return n, nil
}

// MustNew is New for configurations known to be valid.
func MustNew(cfg Config) *Network {
	n, err := New(cfg)
	if err != nil {
		panic(err)
	}
	return n
}

// Tensors lists every tensor in the stable order used for graph inputs,
// initialisation and checkpoints.
func (n *Network) Tensors() []*Tensor { return n.tensors }

// Count returns the number of trainable scalars and the breakdown by
// top-level module.
func (n *Network) Count() (int, map[string]int) {
	mods := map[string]int{}
	total := 0
	for _, t := range n.tensors {
		mods[t.Module()] += t.Size()
		total += t.Size()
	}
	return total, mods
}

// Init fills every tensor from its rule. Only InitTorch tensors draw from
// rng, one Float64 per element in Tensors order.
func (n *Network) Init(rng *rand.Rand) {
	for _, t := range n.tensors {
		t.Data = make([]float32, t.Size())
		switch t.Init.Kind {
		case InitTorch:
			bound := 1 / math.Sqrt(float64(t.Init.FanIn))
			for k := range t.Data {
				t.Data[k] = float32((2*rng.Float64() - 1) * bound)
			}
		case InitOne:
			for k := range t.Data {
				t.Data[k] = 1
			}
		case InitConst:
			for k := range t.Data {
				t.Data[k] = t.Init.Value
			}
		}
	}
}

// SetData points every tensor at data (in Tensors order), checking sizes.
func (n *Network) SetData(data [][]float32) error {
	if len(data) != len(n.tensors) {
		return fmt.Errorf("arch: %d arrays for %d tensors", len(data), len(n.tensors))
	}
	for i, t := range n.tensors {
		if len(data[i]) != t.Size() {
			return fmt.Errorf("arch: %s has %d values, want %d (shape %v)", t.Name, len(data[i]), t.Size(), t.Shape)
		}
		t.Data = data[i]
	}
	return nil
}

// Data returns the tensors' arrays in Tensors order.
func (n *Network) Data() [][]float32 {
	out := make([][]float32, len(n.tensors))
	for i, t := range n.tensors {
		out[i] = t.Data
	}
	return out
}

// ByName returns the tensor called name, or nil. For readers of files;
// the graph reaches tensors through fields.
func (n *Network) ByName(name string) *Tensor {
	for _, t := range n.tensors {
		if t.Name == name {
			return t
		}
	}
	return nil
}
