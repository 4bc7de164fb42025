package bench

import _ "embed"

// SmokeBaselineFile is where the smoke profile's accuracy baseline lives
// in the repository; the binary carries a copy (SmokeBaseline), so
// `afin check` gates the same way from any working directory.
const SmokeBaselineFile = "bench/baselines/smoke.json"

//go:embed baselines/smoke.json
var smokeBaseline []byte

// SmokeBaseline is the committed smoke baseline as built into the binary.
func SmokeBaseline() []byte { return smokeBaseline }
