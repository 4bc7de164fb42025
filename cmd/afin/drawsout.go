package main

import (
	"fmt"
	"os"

	"github.com/afin-bench/afin/methods"
	"github.com/afin-bench/afin/posterior"
)

// Draw-file formats of --draws-format. afin's own (z1..zd[,w]) stays the
// default: metrics, external methods and other tools read it. posterior is
// the draws data frame that R posterior's as_draws_df and pandas/ArviZ read
// as is (see posterior.WriteDrawsDF).
const (
	drawsFormatAfin      = "afin"
	drawsFormatPosterior = "posterior"
)

func checkDrawsFormat(format string) error {
	if format != drawsFormatAfin && format != drawsFormatPosterior {
		return badInput(fmt.Errorf("--draws-format: must be %s or %s, got %q", drawsFormatAfin, drawsFormatPosterior, format))
	}
	return nil
}

// drawChains is the number of chains the draws came from: the samplers
// (NUTS, afin-imh, auto's NUTS fallback) hand them over chain after chain
// in equal parts, and say how many in their diagnostics; any other method's
// draws are independent, one chain.
func drawChains(dg methods.Diagnostics, n int) int {
	c := 1
	switch {
	case dg.NUTSDiagnostics != nil && dg.NUTSDiagnostics.Chains > 0:
		c = dg.NUTSDiagnostics.Chains
	case dg.IMHDiagnostics != nil && dg.IMHDiagnostics.Chains > 0:
		c = dg.IMHDiagnostics.Chains
	}
	if n%c != 0 {
		return 1
	}
	return c
}

// writeDrawsAs writes the draws of infer's result in the chosen format.
func writeDrawsAs(path, format string, res *inferResult) error {
	return writeDrawsIn(path, format, res.Draws, drawChains(res.Diagnostics, res.Draws.Len()))
}

// writeDrawsIn writes draws that are chains equal chains, one after the
// other, in the chosen format (afin's has no chains and ignores them).
func writeDrawsIn(path, format string, d *posterior.Draws, chains int) error {
	if format == drawsFormatAfin {
		return writeDrawsFile(path, d)
	}
	if chains < 1 || d.Len()%chains != 0 {
		chains = 1
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("writing draws: %w", err)
	}
	if err := posterior.WriteDrawsDF(f, d, chains); err != nil {
		f.Close()
		return fmt.Errorf("writing draws to %s: %w", path, err)
	}
	return f.Close()
}
