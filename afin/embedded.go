package afin

import (
	"os"

	"github.com/afin-bench/afin/checkpoints"
)

// embeddedCheckpointDir extracts the checkpoint embedded in the binary
// (package checkpoints) into the cache and returns its directory.
func embeddedCheckpointDir() (string, error) {
	return checkpoints.Extract(os.Getenv("AFIN_CACHE_DIR"))
}
