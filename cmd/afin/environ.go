package main

import (
	"os"

	"github.com/afin-bench/afin/afin"
)

// The library packages read no environment variables; the CLI reads them
// here (and in main) and passes the values down.

// cacheDirEnv names the root of afin's caches: reference posteriors are
// cached in it, the embedded checkpoint is extracted under its
// checkpoints/.
const cacheDirEnv = "AFIN_CACHE_DIR"

// flagOrEnv is a flag's value when it is set, else the environment
// variable's.
func flagOrEnv(flagValue, envName string) string {
	if flagValue != "" {
		return flagValue
	}
	return os.Getenv(envName)
}

// The environment variables that steer the network. They are read here
// only; the library packages take the values (afin.EngineChoice, a
// checkpoint directory).
const (
	// engineEnv picks the implementation: "native" or "gomlx"; unset,
	// native whenever GoMLX would run on the pure Go backend.
	engineEnv = "AFIN_ENGINE"
	// backendEnv is GoMLX's backend ("go", "xla:cuda", ...).
	backendEnv = "GOMLX_BACKEND"
	// checkpointEnv is the checkpoint used when no --checkpoint is given.
	checkpointEnv = "AFIN_CHECKPOINT"
)

// engineChoice is the implementation this process runs the network on.
func engineChoice() afin.EngineChoice {
	return afin.EngineChoice{Engine: os.Getenv(engineEnv), Backend: os.Getenv(backendEnv)}
}

// defaultCheckpoint is the checkpoint a command without --checkpoint
// uses: $AFIN_CHECKPOINT if set, else the shipped one.
func defaultCheckpoint() (string, error) {
	if d := os.Getenv(checkpointEnv); d != "" {
		return d, nil
	}
	return afin.DefaultCheckpointDir(os.Getenv(cacheDirEnv))
}

// envCheckpoint is $AFIN_CHECKPOINT ("" when unset: the shipped one).
func envCheckpoint() string { return os.Getenv(checkpointEnv) }

// checkpointOr is a --checkpoint value, or $AFIN_CHECKPOINT when it is
// empty ("" when both are: the shipped one).
func checkpointOr(flag string) string {
	if flag != "" {
		return flag
	}
	return envCheckpoint()
}
