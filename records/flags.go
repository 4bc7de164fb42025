package records

// FlagKind is one kind of warning flag a record may carry (a key of
// Record.Flags), with the words tables count it by.
type FlagKind struct {
	Name, Words string
}

// FlagKinds lists every flag kind, in the order tables name them. The
// methods that raise flags (methods.Flags.Raised) are tested to raise
// only these, and the report's breakdown is built from this list, so a
// kind added to one cannot be left out of the other.
func FlagKinds() []FlagKind {
	return []FlagKind{
		{"not_converged", "not converged"},
		{"outside_support", "outside training support"},
		{"poor_fit", "poor fit (k̂ > 0.7)"},
		{"degenerate", "degenerate weights or sd 0"},
		{"sampler", "MCMC checks failed"},
		{"shifted", "shifted"},
		{"too_wide", "too wide"},
		{"too_narrow", "too narrow"},
		{"near_threshold", "near a fit-check threshold"},
		{"no_likelihood", "no likelihood"},
		{"task_range", "task values outside the tested range"},
	}
}
