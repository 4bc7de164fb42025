package main

import "os"

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
