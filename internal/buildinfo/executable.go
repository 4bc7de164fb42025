package buildinfo

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"sync"
)

// Executable is "sha256:<hex>" of the running executable, or "" when it
// cannot be read. It names a build when no commit was stamped (or the
// tree was modified): Go builds are reproducible, so two builds of the
// same source with the same flags hash alike and any other build differs.
// Computed once per process, since every record of a run asks for it.
func Executable() string { return executableHash() }

var executableHash = sync.OnceValue(func() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	f, err := os.Open(exe)
	if err != nil {
		return ""
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return ""
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
})
