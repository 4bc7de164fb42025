// Package afin is the Amortized Factor Inference Network: per-family
// adapters that turn each prior and likelihood factor of a task into node
// (per coordinate) and pair (per coordinate pair) tokens, a shared BoxMLP
// encoder, BoxTransformer blocks in which the factor tokens attend to each
// other, sum pooling over factors, and a decoder: a Gaussian whose
// precision is diagonally dominant (so positive definite by construction)
// or a conditional RealNVP flow.
//
// The network is written with GoMLX as a pure function of an explicit,
// ordered parameter list (see Config and CountParams), so the training
// loop (AdamW, clipping, EMA, checkpoints, resume) is plain Go and a
// checkpoint is named float32 arrays. The pure Go backend
// (GOMLX_BACKEND=go, the default here) runs everywhere without downloads.
//
// Inference: Load a checkpoint directory (DefaultCheckpointDir finds the
// shipped one), then Model.Forward / Model.Posterior give the Gaussian
// (mean, precision, covariance, Sample, LogQ in float64); flow checkpoints
// use Model.SampleFlow and Model.LogQFlow. Training: Trainer.Train.
package afin
