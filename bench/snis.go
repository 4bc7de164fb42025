package bench

import "github.com/afin-bench/afin/posterior"

// snisDiagnostics turns SNIS weight diagnostics into a record's
// diagnostics (the paper's Table 9 columns plus ESS).
func snisDiagnostics(info posterior.SNISInfo) map[string]float64 {
	return map[string]float64{
		"pareto_k":      info.ParetoK,
		"max_weight":    info.MaxWeight,
		"entropy_ratio": info.EntropyRatio,
		"ess":           info.ESS,
		"non_finite":    float64(info.NonFinite),
	}
}
