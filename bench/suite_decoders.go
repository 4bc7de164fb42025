package bench

import (
	"errors"
	"fmt"

	"github.com/afin-bench/afin/afin/checkpoint"
	"github.com/afin-bench/afin/methods"
	"github.com/afin-bench/afin/suite"
)

// DecodersSuite is the decoder comparison (paper Table 2): AFIN, and
// AFIN+SNIS at the same proposal budgets (Profile.DecoderSNISProposals,
// which stops at 10⁵ under the paper profile: the paper's table has no
// SNIS), on the synthetic settings, once with a Gaussian-decoder
// checkpoint and once with a flow-decoder one
// (the suite's flags --checkpoint-gaussian and --checkpoint-flow). The
// decoder is the units' variant ("gaussian", "flow"), so the two halves
// are told apart in records and reports, and each record's provenance
// carries its own checkpoint's hash.
const DecodersSuite = suite.Decoders

// decodersSuite runs every unit once per decoder, on that decoder's
// checkpoint.
type decodersSuite struct {
	BaseSuite
	info suite.Info
}

func init() { Register(decodersSuite{info: builtinInfo(DecodersSuite)}) }

func (s decodersSuite) Info() suite.Info { return s.info }

func (s decodersSuite) Settings(*Profile) ([]Setting, error) { return syntheticGrid(s.info.Name), nil }

func (decodersSuite) Plans(p *Profile) []Plan { return p.decoderPlans() }

// Ladder is the profile's, except that proposals follow the decoder
// ladder, as the suite's own AFIN+SNIS plans do.
func (decodersSuite) Ladder(p *Profile, kind string) []int {
	if kind == methods.KindProposals {
		return p.DecoderSNISProposals
	}
	return p.kindLadder(kind)
}

// Flags: the two checkpoints the suite compares.
func (decodersSuite) Flags() []Flag {
	var out []Flag
	for _, dec := range Decoders {
		out = append(out, Flag{Name: decoderFlag(dec), Usage: "decoders suite: the " + dec + "-decoder checkpoint directory"})
	}
	return out
}

// Prepare refuses a missing checkpoint or one of the other decoder.
func (decodersSuite) Prepare(cfg *Config, _ []Setting, _ []uint64) error {
	return decoderCheckpoints(cfg).Check()
}

// variantEnvs: each decoder variant runs on its own checkpoint.
func (decodersSuite) variantEnvs(cfg *Config) map[string]*methods.Env {
	ck := decoderCheckpoints(cfg)
	out := map[string]*methods.Env{}
	for _, dec := range Decoders {
		out[dec] = cfg.Env.WithCheckpoint(ck.dir(dec))
	}
	return out
}

// decoderFlag is the flag naming a decoder's checkpoint.
func decoderFlag(decoder string) string { return "checkpoint-" + decoder }

// decoderCheckpoints are the checkpoints the run's suite flags name.
func decoderCheckpoints(cfg *Config) DecoderCheckpoints {
	return DecoderCheckpoints{Gaussian: cfg.SuiteFlags[decoderFlag("gaussian")], Flow: cfg.SuiteFlags[decoderFlag("flow")]}
}

// SuiteFlags are the suite flags that name these checkpoints
// (Config.SuiteFlags of a decoders run).
func (c DecoderCheckpoints) SuiteFlags() map[string]string {
	return map[string]string{decoderFlag("gaussian"): c.Gaussian, decoderFlag("flow"): c.Flow}
}

// Decoders are the decoder variants of the decoders suite, in table
// order.
var Decoders = []string{"gaussian", "flow"}

// ErrDecoderCheckpoint: a checkpoint of the decoders suite is missing or
// has the other decoder.
var ErrDecoderCheckpoint = errors.New("decoders suite checkpoint")

// DecoderCheckpoints are the two checkpoint directories the decoders
// suite compares.
type DecoderCheckpoints struct {
	Gaussian, Flow string
}

// dir is the checkpoint of a decoder variant.
func (c DecoderCheckpoints) dir(decoder string) string {
	if decoder == "flow" {
		return c.Flow
	}
	return c.Gaussian
}

// Check refuses a missing checkpoint or one whose decoder is not the one
// it is given for, before any work (reading only its architecture).
func (c DecoderCheckpoints) Check() error {
	for _, dec := range Decoders {
		dir := c.dir(dec)
		if dir == "" {
			return fmt.Errorf("%w: --checkpoint-%s is required", ErrDecoderCheckpoint, dec)
		}
		m, err := checkpoint.ReadManifest(dir)
		if err != nil {
			return fmt.Errorf("%w: --checkpoint-%s: %w", ErrDecoderCheckpoint, dec, err)
		}
		if m.Config.Decoder != dec {
			return fmt.Errorf("%w: --checkpoint-%s %s has a %s decoder", ErrDecoderCheckpoint, dec, dir, m.Config.Decoder)
		}
	}
	return nil
}

// decoderPlans are the decoders suite's plans under p: AFIN single shot
// and AFIN+SNIS at the profile's decoder ladder, once per decoder (the
// variant), each run on its decoder's checkpoint (variantEnvs).
func (p *Profile) decoderPlans() []Plan {
	opts := p.options(p.FRVIDraws)
	var out []Plan
	for _, dec := range Decoders {
		out = append(out,
			Plan{Method: methods.AFIN, Variant: dec, Ladder: []int{p.AFINDraws}, Options: opts},
			Plan{Method: methods.AFINSNIS, Variant: dec, Ladder: p.DecoderSNISProposals, Options: opts})
	}
	return out
}
