package train

import "github.com/afin-bench/afin/afin/arch"

// tinyConfig keeps the tests fast while exercising every module.
func tinyConfig() arch.Config {
	return arch.Config{Name: "tiny", Decoder: "gaussian", C: 8, AdapterH: 8, AdapterL: 2,
		EncLayers: 1, BoxH: 8, BoxL: 3, Blocks: 1, Heads: 2, MergeH: 8, MergeL: 3,
		DecH: 8, DecL: 2, OffdiagMul: 0.1}
}
