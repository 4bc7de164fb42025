package main

import (
	"context"
	"errors"
)

// runTrain is a placeholder until this subcommand lands.
func runTrain(ctx context.Context, env *cliEnv, args []string) error {
	return errors.New("not built yet")
}
