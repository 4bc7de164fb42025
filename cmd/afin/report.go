package main

import (
	"context"
	"errors"
)

// runReport is a placeholder until this subcommand lands.
func runReport(ctx context.Context, env *cliEnv, args []string) error {
	return errors.New("not built yet")
}
