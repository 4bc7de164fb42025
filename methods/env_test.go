package methods

import (
	"testing"

	"github.com/afin-bench/afin/afin"
)

// A decoder comparison swaps the checkpoint: the settings carry over, the
// loaded network does not.
func TestEnvWithCheckpoint(t *testing.T) {
	e := &Env{Checkpoint: "a", Engine: afin.EngineChoice{Engine: "native"}, CacheDir: "c", MethodsFile: "m", net: &netOnce{}}
	got := e.WithCheckpoint("b")
	if got.Checkpoint != "b" || got.Engine != e.Engine || got.CacheDir != "c" || got.MethodsFile != "m" || got.net != nil {
		t.Errorf("WithCheckpoint: %+v", got)
	}
	if n := (*Env)(nil).WithCheckpoint("b"); n.Checkpoint != "b" || n.net != nil {
		t.Errorf("nil WithCheckpoint: %+v", n)
	}
}
