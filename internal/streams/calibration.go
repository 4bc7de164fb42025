package streams

// Streams of the calibration work (issue 18): afin-imh, auto and the
// calibration suite. Values are new and frozen like the others.
const (
	// IMHAccept: the accept/reject uniforms of afin-imh at ladder point
	// i is IMHAccept.At(i) (its proposals use AFINLadder.At(i)).
	IMHAccept Stream = 0x1a4c
	// AutoProposals: auto's AFIN proposals for its PSIS check.
	AutoProposals Stream = 0xa070
	// AutoInit: auto's choice of NUTS starting points among AFIN draws.
	AutoInit Stream = 0xa071
	// CalibrationRanks: rank randomisation and resampling in SBC.
	CalibrationRanks Stream = 0xca1b
)
