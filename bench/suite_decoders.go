package bench

import (
	"context"
	"errors"
	"fmt"

	"github.com/afin-bench/afin/afin/checkpoint"
	"github.com/afin-bench/afin/methods"
	"github.com/afin-bench/afin/suite"
)

// DecodersSuite is the decoder comparison (paper Table 2): AFIN and
// AFIN+SNIS at the same proposal budgets on the synthetic settings, once
// with a Gaussian-decoder checkpoint and once with a flow-decoder one.
// The decoder is the units' variant ("gaussian", "flow"), so the two
// halves are told apart in records and reports, and each record's
// provenance carries its own checkpoint's hash.
const DecodersSuite = suite.Decoders

// decodersSuite runs its own way (Runner): Run's units once per decoder.
type decodersSuite struct {
	BaseSuite
	info suite.Info
}

func init() { Register(decodersSuite{info: builtinInfo(DecodersSuite)}) }

func (s decodersSuite) Info() suite.Info { return s.info }

func (s decodersSuite) Settings(*Profile) ([]Setting, error) { return syntheticGrid(s.info.Name), nil }

func (decodersSuite) Plans(p *Profile) []Plan { return p.decoderPlans() }

// Run runs the suite with cfg.Decoders' checkpoints (RunDecoders).
func (decodersSuite) Run(ctx context.Context, cfg Config) (*Summary, error) {
	return RunDecoders(ctx, cfg, cfg.Decoders)
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

// RunDecoders runs the decoders suite: Run's units once per decoder, in
// Decoders' order, each with its own checkpoint and the decoder as the
// profile's Decoder (hence the units' variant). Both append to the suite's
// results file in turn, so a rerun resumes either half. cfg.Suite and
// cfg.Env are set here; the summary adds up both halves. bench.Run hands
// the suite's config here with cfg.Decoders as ck.
func RunDecoders(ctx context.Context, cfg Config, ck DecoderCheckpoints) (*Summary, error) {
	if err := ck.Check(); err != nil {
		return nil, err
	}
	if cfg.Profile == nil {
		return nil, errors.New("bench: no profile")
	}
	s, err := lookupSuite(DecodersSuite)
	if err != nil {
		return nil, err
	}
	var total *Summary
	for _, dec := range Decoders {
		c := cfg
		prof := *cfg.Profile
		prof.Decoder = dec
		c.Profile, c.Suite, c.Env = &prof, DecodersSuite, cfg.Env.WithCheckpoint(ck.dir(dec))
		sum, err := runUnits(ctx, c, s)
		total = addSummary(total, sum)
		if err != nil {
			return total, fmt.Errorf("%s decoder: %w", dec, err)
		}
	}
	return total, nil
}

// addSummary adds b's counts to a (either may be nil).
func addSummary(a, b *Summary) *Summary {
	if b == nil {
		return a
	}
	if a == nil {
		c := *b
		return &c
	}
	a.Units += b.Units
	a.Skipped += b.Skipped
	a.Ran += b.Ran
	a.Failed += b.Failed
	a.PrevFailed += b.PrevFailed
	a.Records += b.Records
	a.Notes = append(a.Notes, b.Notes...)
	a.Duration += b.Duration
	return a
}

// decoderPlans are the decoders suite's plans under p: AFIN single shot
// and AFIN+SNIS at the profile's proposal ladder, for p.Decoder (none
// when the profile names no decoder: the suite runs through RunDecoders).
func (p *Profile) decoderPlans() []Plan {
	if p.Decoder == "" {
		return nil
	}
	opts := p.options(p.FRVIDraws)
	return []Plan{
		{Method: methods.AFIN, Variant: p.Decoder, Ladder: []int{p.AFINDraws}, Options: opts},
		{Method: methods.AFINSNIS, Variant: p.Decoder, Ladder: p.SNISProposals, Options: opts},
	}
}
