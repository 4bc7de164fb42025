package main

import (
	"context"
	"errors"
)

// runReference is a placeholder until this subcommand lands.
func runReference(ctx context.Context, env *cliEnv, args []string) error {
	return errors.New("not built yet")
}
