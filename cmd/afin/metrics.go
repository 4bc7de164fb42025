package main

import (
	"context"
	"errors"
)

// runMetrics is a placeholder until this subcommand lands.
func runMetrics(ctx context.Context, env *cliEnv, args []string) error {
	return errors.New("not built yet")
}
