package afin

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
)

// Config fixes the architecture. Widths follow the facts sheet: every
// backbone MLP is MLP(in, out, H, L) with SiLU between L linear layers.
type Config struct {
	Name    string `json:"name"`
	Decoder string `json:"decoder"` // "gaussian" or "flow"

	C          int     `json:"c"`             // token channel width
	AdapterH   int     `json:"adapter_h"`     // adapter MLP hidden width
	AdapterL   int     `json:"adapter_l"`     // adapter MLP linear layers
	EncLayers  int     `json:"enc_layers"`    // stacked encoder BoxLayers
	BoxH       int     `json:"box_h"`         // BoxLayer branch hidden width
	BoxL       int     `json:"box_l"`         // BoxLayer branch linear layers
	Blocks     int     `json:"blocks"`        // BoxTransformer merge blocks
	Heads      int     `json:"heads"`         // attention heads per block
	MergeH     int     `json:"merge_h"`       // hidden width of Q/K/V/Out/FFN maps
	MergeL     int     `json:"merge_l"`       // linear layers of those maps
	DecH       int     `json:"dec_h"`         // Gaussian decoder MLP hidden width
	DecL       int     `json:"dec_l"`         // Gaussian decoder MLP linear layers
	OffdiagMul float64 `json:"offdiag_scale"` // scale of the off-diagonal precision head

	// Flow decoder widths (facts §6); counted for the flow variant.
	FlowG     int `json:"flow_g"`
	FlowH     int `json:"flow_h"`
	FlowL     int `json:"flow_l"`
	FlowSteps int `json:"flow_steps"`
}

// PaperConfig is the configuration of the paper's checkpoints (facts §0):
// 4,550,011 trainable parameters with the Gaussian decoder and 5,051,458
// with the flow.
func PaperConfig(decoder string) Config {
	return Config{
		Name: "paper", Decoder: decoder,
		C: 40, AdapterH: 64, AdapterL: 2,
		EncLayers: 4, BoxH: 192, BoxL: 3,
		Blocks: 4, Heads: 8, MergeH: 192, MergeL: 3,
		DecH: 160, DecL: 3, OffdiagMul: 0.1,
		FlowG: 160, FlowH: 32, FlowL: 3, FlowSteps: 4,
	}
}

// SmallConfig is sized to train on two shared CPU cores with the pure Go
// backend: the same architecture with narrower widths and fewer layers.
func SmallConfig(decoder string) Config {
	return Config{
		Name: "small", Decoder: decoder,
		C: 16, AdapterH: 32, AdapterL: 2,
		EncLayers: 2, BoxH: 32, BoxL: 3,
		Blocks: 1, Heads: 4, MergeH: 32, MergeL: 3,
		DecH: 32, DecL: 3, OffdiagMul: 0.1,
		FlowG: 48, FlowH: 32, FlowL: 3, FlowSteps: 4,
	}
}

// ConfigByName returns a named configuration.
func ConfigByName(name, decoder string) (Config, error) {
	if decoder != "gaussian" && decoder != "flow" {
		return Config{}, fmt.Errorf("decoder %q: want gaussian or flow", decoder)
	}
	switch name {
	case "paper":
		return PaperConfig(decoder), nil
	case "small":
		return SmallConfig(decoder), nil
	}
	return Config{}, fmt.Errorf("config %q: want small or paper", name)
}

// Validate checks the widths are usable.
func (c Config) Validate() error {
	if c.C <= 0 || c.AdapterH <= 0 || c.BoxH <= 0 || c.MergeH <= 0 || c.DecH <= 0 {
		return fmt.Errorf("config %s: widths must be positive", c.Name)
	}
	if c.AdapterL < 1 || c.BoxL < 1 || c.MergeL < 1 || c.DecL < 1 {
		return fmt.Errorf("config %s: MLPs need at least one linear layer", c.Name)
	}
	if c.Heads <= 0 || c.C%c.Heads != 0 {
		return fmt.Errorf("config %s: %d heads do not divide C=%d", c.Name, c.Heads, c.C)
	}
	if c.Decoder != "gaussian" && c.Decoder != "flow" {
		return fmt.Errorf("config %s: decoder %q: want gaussian or flow", c.Name, c.Decoder)
	}
	return nil
}

// Param is one named trainable array, row-major. Linear weights are
// stored (in, out).
type Param struct {
	Name  string    `json:"name"`
	Shape []int     `json:"shape"`
	Data  []float32 `json:"-"`
}

// Size is the number of scalars in p.
func (p *Param) Size() int {
	n := 1
	for _, s := range p.Shape {
		n *= s
	}
	return n
}

// Module is the top-level module a parameter belongs to (its name up to
// the first slash).
func (p *Param) Module() string {
	if i := strings.IndexByte(p.Name, '/'); i >= 0 {
		return p.Name[:i]
	}
	return p.Name
}

// initKind says how a parameter starts.
type initKind int

const (
	initTorch initKind = iota // uniform ±1/sqrt(fan_in), PyTorch's Linear default
	initZero
	initOne
	initConst
)

type paramSpec struct {
	name  string
	shape []int
	kind  initKind
	fanIn int
	value float32
}

// specBuilder collects parameter specs in a fixed order; the order is the
// graph's parameter input order and the checkpoint order.
type specBuilder struct{ specs []paramSpec }

func (s *specBuilder) add(name string, kind initKind, fanIn int, value float32, shape ...int) {
	s.specs = append(s.specs, paramSpec{name: name, shape: shape, kind: kind, fanIn: fanIn, value: value})
}

// mlp adds MLP(in, out, h, l). lastW and lastB say how the last layer's
// weight and bias start.
func (s *specBuilder) mlp(prefix string, in, out, h, l int, lastW, lastB initKind, lastBValue float32) {
	width := in
	for k := 0; k < l; k++ {
		o := h
		wk, bk, bv := initTorch, initTorch, float32(0)
		if k == l-1 {
			o = out
			wk, bk, bv = lastW, lastB, lastBValue
		}
		s.add(fmt.Sprintf("%s/l%d/w", prefix, k), wk, width, 0, width, o)
		s.add(fmt.Sprintf("%s/l%d/b", prefix, k), bk, width, bv, o)
		width = o
	}
}

// boxMLP adds the two branches (pair, node) of a BoxLayer/BoxTensorMap
// acting on C channels with 6C summaries.
func (s *specBuilder) boxMLP(prefix string, c, out, h, l int, zeroLast bool) {
	wk, bk := initTorch, initTorch
	if zeroLast {
		wk, bk = initZero, initZero
	}
	s.mlp(prefix+"/pair", 6*c, out, h, l, wk, bk, 0)
	s.mlp(prefix+"/node", 6*c, out, h, l, wk, bk, 0)
}

// Descriptor widths (facts §1), in family-ID order.
var (
	priorNodeWidth = map[string]int{"diag_gaussian": 3, "fullrank_gaussian": 3, "diag_student_t": 4, "diag_laplace": 3}
	priorPairWidth = map[string]int{"diag_gaussian": 7, "fullrank_gaussian": 8, "diag_student_t": 8, "diag_laplace": 7}
	likNodeWidth   = map[string]int{"lin_gaussian": 5, "bernoulli_logit": 5, "binomial_logit": 7, "lin_student_t": 6, "gaussian": 5}
	likPairWidth   = map[string]int{"lin_gaussian": 9, "bernoulli_logit": 9, "binomial_logit": 11, "lin_student_t": 10, "gaussian": 6}
)

func (c Config) specs() []paramSpec {
	var s specBuilder
	for _, f := range priorFamilies {
		s.mlp("adapters/prior/"+f+"/node", priorNodeWidth[f], c.C, c.AdapterH, c.AdapterL, initTorch, initZero, 0)
		s.mlp("adapters/prior/"+f+"/pair", priorPairWidth[f], c.C, c.AdapterH, c.AdapterL, initTorch, initZero, 0)
	}
	for _, f := range likFamilies {
		s.mlp("adapters/lik/"+f+"/node", likNodeWidth[f], c.C, c.AdapterH, c.AdapterL, initTorch, initZero, 0)
		s.mlp("adapters/lik/"+f+"/pair", likPairWidth[f], c.C, c.AdapterH, c.AdapterL, initTorch, initZero, 0)
	}
	for l := 0; l < c.EncLayers; l++ {
		s.boxMLP(fmt.Sprintf("encoder/%d", l), c.C, c.C, c.BoxH, c.BoxL, true)
	}
	for b := 0; b < c.Blocks; b++ {
		p := fmt.Sprintf("merge/%d", b)
		for _, ln := range []string{"ln_attn_node", "ln_attn_pair", "ln_ffn_node", "ln_ffn_pair"} {
			s.add(p+"/"+ln+"/g", initOne, 0, 0, c.C)
			s.add(p+"/"+ln+"/b", initZero, 0, 0, c.C)
		}
		s.add(p+"/mix", initZero, 0, 0, 2)
		s.boxMLP(p+"/q", c.C, c.C, c.MergeH, c.MergeL, false)
		s.boxMLP(p+"/k", c.C, c.C, c.MergeH, c.MergeL, false)
		s.boxMLP(p+"/v", c.C, c.C, c.MergeH, c.MergeL, false)
		s.boxMLP(p+"/out", c.C, c.C, c.MergeH, c.MergeL, true)
		s.boxMLP(p+"/ffn", c.C, c.C, c.MergeH, c.MergeL, true)
	}
	if c.Decoder == "flow" {
		g := c.FlowG
		s.mlp("flow_context/node", 3*c.C, g, max(32, g), 3, initTorch, initTorch, 0)
		s.mlp("flow_context/pair", c.C, g, max(32, g), 3, initTorch, initTorch, 0)
		s.mlp("flow_affine", 5*c.C, 2, max(32, 5*c.C), 3, initZero, initZero, 0)
		for t := 0; t < c.FlowSteps; t++ {
			p := fmt.Sprintf("couplings/%d", t)
			s.mlp(p+"/node", g+2, g, c.FlowH, c.FlowL, initTorch, initTorch, 0)
			s.mlp(p+"/pair", g+6, g, c.FlowH, c.FlowL, initTorch, initTorch, 0)
			s.boxMLP(p+"/box", g, g, c.FlowH, c.FlowL, true)
			s.mlp(p+"/head", g, 2, c.FlowH, c.FlowL, initZero, initZero, 0)
		}
	} else {
		s.mlp("gaussian_decoder/offdiag", c.C, 1, c.DecH, c.DecL, initZero, initZero, 0)
		// softplus(log(e−1)) = 1: the precision diagonal starts near 1.
		s.mlp("gaussian_decoder/diag", c.C, 1, c.DecH, c.DecL, initZero, initConst, float32(math.Log(math.E-1)))
		s.mlp("gaussian_decoder/mean", 5*c.C, 1, c.DecH, c.DecL, initZero, initZero, 0)
	}
	return s.specs
}

// NewParams returns freshly initialised parameters for c.
func NewParams(c Config, rng *rand.Rand) []*Param {
	specs := c.specs()
	ps := make([]*Param, len(specs))
	for i, sp := range specs {
		p := &Param{Name: sp.name, Shape: sp.shape}
		p.Data = make([]float32, p.Size())
		switch sp.kind {
		case initTorch:
			bound := 1 / math.Sqrt(float64(sp.fanIn))
			for k := range p.Data {
				p.Data[k] = float32((2*rng.Float64() - 1) * bound)
			}
		case initOne:
			for k := range p.Data {
				p.Data[k] = 1
			}
		case initConst:
			for k := range p.Data {
				p.Data[k] = sp.value
			}
		}
		ps[i] = p
	}
	return ps
}

// CountParams returns the total number of trainable scalars and the
// breakdown by top-level module.
func CountParams(c Config) (int, map[string]int) {
	mods := map[string]int{}
	total := 0
	for _, sp := range c.specs() {
		p := Param{Name: sp.name, Shape: sp.shape}
		mods[p.Module()] += p.Size()
		total += p.Size()
	}
	return total, mods
}

// moduleNames lists the module names in sorted order.
func moduleNames(m map[string]int) []string {
	var names []string
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// ModuleOrder lists module names in a stable order for printing.
func ModuleOrder(m map[string]int) []string { return moduleNames(m) }
