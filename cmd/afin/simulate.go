package main

import (
	"context"
	"errors"
)

// runSimulate is a placeholder until this subcommand lands.
func runSimulate(ctx context.Context, env *cliEnv, args []string) error {
	return errors.New("not built yet")
}
