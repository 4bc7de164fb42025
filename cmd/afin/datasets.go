package main

import (
	"context"
	"errors"
)

// runDatasets is a placeholder until this subcommand lands.
func runDatasets(ctx context.Context, env *cliEnv, args []string) error {
	return errors.New("not built yet")
}
