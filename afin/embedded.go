package afin

import "github.com/afin-bench/afin/checkpoints"

// embeddedCheckpointDir extracts the checkpoint embedded in the binary
// (package checkpoints) into the cache root cacheDir ("": the user cache)
// and returns its directory.
func embeddedCheckpointDir(cacheDir string) (string, error) {
	return checkpoints.Extract(cacheDir)
}
