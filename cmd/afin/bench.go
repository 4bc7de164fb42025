package main

import (
	"context"
	"errors"
)

// runBench is a placeholder until this subcommand lands.
func runBench(ctx context.Context, env *cliEnv, args []string) error {
	return errors.New("not built yet")
}
