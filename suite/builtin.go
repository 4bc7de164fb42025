package suite

// The built-in suites' names.
const (
	Synthetic     = "synthetic"
	Extrapolation = "extrapolation"
	SNIS          = "snis"
	UCI           = "uci"
	Decoders      = "decoders"
	Calibration   = "calibration"
	External      = "external"
	OpenML        = "openml"
)

// The built-in suites' entries, in the order `afin bench --suite` lists
// them; package bench attaches their behaviour (bench/suite_*.go).
func init() {
	for _, i := range []Info{
		{Name: Synthetic, Scoring: ByReference},
		{Name: Extrapolation, Scoring: ByReference},
		{Name: SNIS, Scoring: ByReference},
		{Name: UCI, Scoring: ByReference},
		{Name: Decoders, Scoring: ByReference},
		{Name: Calibration, Scoring: ByRanks},
		{Name: External, Scoring: ByReference},
		{Name: OpenML, Scoring: ByPrediction, DataDirEnv: "AFIN_OPENML_DIR"},
	} {
		Register(i)
	}
}
