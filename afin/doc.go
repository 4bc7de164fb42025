// Package afin is the Amortized Factor Inference Network: per-family
// adapters that turn each prior and likelihood factor of a task into node
// (per coordinate) and pair (per coordinate pair) tokens, a shared BoxMLP
// encoder, BoxTransformer blocks that let the factor tokens attend to each
// other, sum pooling over factors and a Gaussian decoder whose precision is
// diagonally dominant (hence positive definite by construction).
//
// The network is written with GoMLX as a pure function of an explicit,
// ordered parameter list, so the training loop (AdamW, clipping, EMA,
// checkpoints) lives in plain Go and a checkpoint is just named float32
// arrays. The pure Go backend (GOMLX_BACKEND=go) runs it anywhere.
package afin
