package torchimport

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"

	"github.com/afin-bench/afin/afin/arch"
	"github.com/afin-bench/afin/afin/checkpoint"
	"github.com/afin-bench/afin/factor"
)

// runConfig is the part of the authors' config.json afin reads.
type runConfig struct {
	Args    map[string]any `json:"args"`
	ExpType map[string]any `json:"exp_type"`
}

// configReader reads typed values from the args, recording the first
// problem (named after the key).
type configReader struct {
	args map[string]any
	err  error
}

func (r *configReader) fail(format string, a ...any) {
	if r.err == nil {
		r.err = fmt.Errorf(format, a...)
	}
}

// int reads args[key] as an integer; if it is absent or null and
// fallback is non-empty, args[fallback] is read instead (the authors'
// trainer uses hidden_dim for unset decoder and flow context widths).
func (r *configReader) int(key, fallback string) int {
	v, ok := r.args[key]
	if (!ok || v == nil) && fallback != "" {
		key, v, ok = fallback, r.args[fallback], true
	}
	f, isNum := v.(float64)
	if !ok || !isNum || f != math.Trunc(f) || f < 0 {
		r.fail("args.%s: want a non-negative integer, got %v", key, v)
		return 0
	}
	return int(f)
}

func (r *configReader) float(key string, def float64) float64 {
	v, ok := r.args[key]
	if !ok || v == nil {
		return def
	}
	f, isNum := v.(float64)
	if !isNum {
		r.fail("args.%s: want a number, got %v", key, v)
	}
	return f
}

// readConfig reads RUN_DIR/config.json into afin's configuration and the
// run's training support.
func readConfig(dir string) (arch.Config, checkpoint.Support, error) {
	path := filepath.Join(dir, "config.json")
	data, err := os.ReadFile(path)
	if err != nil {
		return arch.Config{}, checkpoint.Support{}, &Error{File: path, Problem: "cannot read the run's config.json: " + errText(err)}
	}
	var rc runConfig
	if err := json.Unmarshal(data, &rc); err != nil || rc.Args == nil {
		return arch.Config{}, checkpoint.Support{}, &Error{File: path, Problem: "not an AFIN run config (want a JSON object with \"args\")"}
	}
	cfg, err := configFromArgs(rc.Args)
	if err != nil {
		return cfg, checkpoint.Support{}, &Error{File: path, Problem: err.Error()}
	}
	sup, err := supportFromExpType(rc.ExpType, rc.Args)
	if err != nil {
		return cfg, sup, &Error{File: path, Problem: err.Error()}
	}
	return cfg, sup, nil
}

// configFromArgs maps the authors' trainer flags to afin's Config; the
// head count follows their rule (arch.HeadsFor), the merge maps have
// max(2, box_num_layers) layers.
func configFromArgs(args map[string]any) (arch.Config, error) {
	r := &configReader{args: args}
	c := arch.Config{Name: "imported", OffdiagMul: r.float("decoder_residual_scale", 0.1)}
	c.Decoder, _ = args["posterior_family"].(string)
	if c.Decoder != "gaussian" && c.Decoder != "flow" {
		return c, fmt.Errorf("args.posterior_family: want gaussian or flow, got %v", args["posterior_family"])
	}
	c.C = r.int("feat_dim", "")
	c.AdapterH, c.AdapterL = r.int("adapter_hidden_dim", ""), r.int("adapter_num_layers", "")
	c.EncLayers, c.BoxH, c.BoxL = r.int("box_depth", ""), r.int("box_hidden_dim", ""), r.int("box_num_layers", "")
	c.Blocks, c.MergeH = r.int("merge_num_layers", ""), r.int("merge_model_dim", "")
	c.MergeL = max(2, c.BoxL)
	c.DecH, c.DecL = r.int("decoder_hidden_dim", "hidden_dim"), r.int("decoder_num_layers", "")
	// The flow widths are read for both decoders: the authors' model
	// object holds the flow modules either way, and the importer checks
	// the unused ones against them.
	c.FlowG = r.int("flow_context_dim", "hidden_dim")
	c.FlowH, c.FlowL, c.FlowSteps = r.int("flow_hidden_dim", ""), r.int("flow_num_layers", ""), r.int("flow_num_steps", "")
	if c.Decoder == "flow" {
		if s := r.float("flow_max_log_scale", arch.FlowMaxLogScale); s != arch.FlowMaxLogScale {
			r.fail("args.flow_max_log_scale: afin's flow bounds log-scales at %g, got %g", arch.FlowMaxLogScale, s)
		}
		if s := r.float("flow_max_strength", 1); s != 1 {
			r.fail("args.flow_max_strength: afin evaluates the flow at strength 1, got %g", s)
		}
	}
	if r.err != nil {
		return c, r.err
	}
	c.Heads = arch.HeadsFor(c.MergeH, c.C)
	if err := c.Validate(); err != nil {
		return c, err
	}
	return c, nil
}

// supportFromExpType reads the run's training support (exp_type, else
// the args' ranges). Design modes are not recorded by the authors'
// trainer; it draws all four.
func supportFromExpType(exp, args map[string]any) (checkpoint.Support, error) {
	src := exp
	keys := [4]string{"d_min", "d_max", "N_min", "N_max"}
	if src == nil {
		src, keys = args, [4]string{"d_min", "d_max", "n_min", "n_max"}
	}
	r := &configReader{args: src}
	s := checkpoint.Support{DMin: r.int(keys[0], ""), DMax: r.int(keys[1], ""), NMin: r.int(keys[2], ""), NMax: r.int(keys[3], ""),
		Designs: slices.Clone(factor.DesignFamilies)}
	if r.err != nil {
		return s, r.err
	}
	for _, p := range stringList(src["prior_families"], factor.PriorFamilies) {
		if !slices.Contains(factor.PriorFamilies, p) {
			return s, fmt.Errorf("prior_families: unknown family %q", p)
		}
		s.Priors = append(s.Priors, p)
	}
	for _, l := range stringList(src["likelihood_families"], nil) {
		p, ok := paperLik(l)
		if !ok {
			return s, fmt.Errorf("likelihood_families: unknown family %q", l)
		}
		s.Likelihoods = append(s.Likelihoods, p)
	}
	if s.Likelihoods == nil {
		s.Likelihoods = slices.Clone(factor.LikelihoodFamilies)
	}
	return s, nil
}

func stringList(v any, def []string) []string {
	list, ok := v.([]any)
	if !ok {
		return def
	}
	var out []string
	for _, x := range list {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}
