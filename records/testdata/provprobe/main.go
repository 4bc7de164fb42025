// Command provprobe prints, as JSON, the provenance its records would
// carry, for the records package's tests of where a commit comes from.
// variant is set with -ldflags -X to make builds that differ.
package main

import (
	"context"
	"encoding/json"
	"os"

	"github.com/afin-bench/afin/records"
)

var variant string

func main() {
	p := records.CurrentProvenance(context.Background(), "smoke"+variant, "native")
	if err := json.NewEncoder(os.Stdout).Encode(p); err != nil {
		os.Exit(1)
	}
}
