package arch

import "fmt"

// Config fixes the architecture. Every backbone MLP is MLP(in, out, H, L):
// L linear layers with SiLU between them (paper eq. (mlp_hidden)).
type Config struct {
	Name    string `json:"name"`
	Decoder string `json:"decoder"` // "gaussian" or "flow"

	C          int     `json:"c"`             // token channel width
	AdapterH   int     `json:"adapter_h"`     // adapter MLP hidden width
	AdapterL   int     `json:"adapter_l"`     // adapter MLP linear layers
	EncLayers  int     `json:"enc_layers"`    // stacked encoder BoxMLP layers
	BoxH       int     `json:"box_h"`         // encoder BoxMLP branch hidden width
	BoxL       int     `json:"box_l"`         // encoder BoxMLP branch linear layers
	Blocks     int     `json:"blocks"`        // BoxTransformer merge blocks
	Heads      int     `json:"heads"`         // attention heads per block
	MergeH     int     `json:"merge_h"`       // hidden width of Q/K/V/Out/FFN maps
	MergeL     int     `json:"merge_l"`       // linear layers of those maps
	DecH       int     `json:"dec_h"`         // Gaussian decoder MLP hidden width
	DecL       int     `json:"dec_l"`         // Gaussian decoder MLP linear layers
	OffdiagMul float64 `json:"offdiag_scale"` // scale of the off-diagonal precision head

	// Flow decoder (App. B.3): context width G, coupling MLP widths, steps.
	// The context and final-affine MLPs have FlowL layers too, with hidden
	// widths max(FlowH, G) and max(FlowH, 5C).
	FlowG     int `json:"flow_g"`
	FlowH     int `json:"flow_h"`
	FlowL     int `json:"flow_l"`
	FlowSteps int `json:"flow_steps"`
}

// PaperConfig is the configuration of the paper's checkpoints (App. D.1,
// Table 8): 4,550,011 trainable parameters with the Gaussian decoder and
// 5,051,458 with the flow.
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

// HeadsFor is the authors' head-count rule: the largest of 8, 4, 2 that
// divides both the merge maps' width and C, else 1.
func HeadsFor(mergeH, c int) int {
	for _, h := range []int{8, 4, 2} {
		if mergeH%h == 0 && c%h == 0 {
			return h
		}
	}
	return 1
}

// Validate checks the widths are usable.
func (c Config) Validate() error {
	if c.C <= 0 || c.AdapterH <= 0 || c.BoxH <= 0 || c.MergeH <= 0 || c.DecH <= 0 {
		return fmt.Errorf("config %s: widths must be positive", c.Name)
	}
	if c.AdapterL < 1 || c.BoxL < 1 || c.MergeL < 1 || c.DecL < 1 {
		return fmt.Errorf("config %s: MLPs need at least one linear layer", c.Name)
	}
	if c.EncLayers < 0 || c.Blocks < 0 {
		return fmt.Errorf("config %s: layer counts must be ≥ 0", c.Name)
	}
	if c.Heads <= 0 || c.C%c.Heads != 0 {
		return fmt.Errorf("config %s: %d heads do not divide C=%d", c.Name, c.Heads, c.C)
	}
	switch c.Decoder {
	case "gaussian":
	case "flow":
		if c.FlowG <= 0 || c.FlowH <= 0 || c.FlowL < 1 || c.FlowSteps < 0 {
			return fmt.Errorf("config %s: flow widths must be positive", c.Name)
		}
	default:
		return fmt.Errorf("config %s: decoder %q: want gaussian or flow", c.Name, c.Decoder)
	}
	return nil
}
