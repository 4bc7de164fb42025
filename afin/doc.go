// Package afin is the Amortized Factor Inference Network of the paper
// (Sec. 4.2, App. B): per-family adapters that turn each prior and
// likelihood factor of a task into node (per coordinate) and pair (per
// coordinate pair) tokens, a shared BoxMLP encoder, BoxTransformer blocks
// in which the factor tokens attend to each other, sum pooling over
// factors, and a decoder: a Gaussian whose precision is diagonally
// dominant (so positive definite by construction) or a conditional
// RealNVP flow.
//
// This package is the facade a method or the CLI calls; the network
// lives in its subpackages. The architecture is declared once, without
// GoMLX, in package arch (configuration, typed tensors, descriptors, flow
// masks), and implemented twice: package cpu (hand-written forward and
// backward passes, the default on a CPU) and package gomlx (the graph as a
// pure function of the tensors, on any GoMLX backend: the GPU path).
// Package engine binds weights to the one a caller chooses (EngineChoice,
// which cmd/afin reads from AFIN_ENGINE and GOMLX_BACKEND). Package train
// is the training loop (AdamW, clipping, EMA, checkpoints, resume), plain
// Go; package heldout the held-out evaluations on conjugate tasks.
//
// Checkpoints are portable directories (package checkpoint): config.json,
// safetensors weights, a separate training state. ImportRun reads the
// authors' PyTorch run directories (package torchimport); FIDELITY.md
// lists how the network was checked against their implementation and the
// differences found and fixed.
//
// Inference: Load a checkpoint directory (DefaultCheckpointDir finds the
// shipped one), then Model.Forward / Model.Posterior give the Gaussian
// (mean, precision, covariance, Sample, LogQ in float64); flow checkpoints
// use Model.SampleFlow and Model.LogQFlow. Model.Hash identifies the
// checkpoint in provenance; Model.Outside says when a task lies outside
// its training support. Training: Trainer.Train.
package afin
