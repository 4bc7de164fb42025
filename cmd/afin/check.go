package main

import (
	"context"
	"errors"
)

// runCheck is a placeholder until this subcommand lands.
func runCheck(ctx context.Context, env *cliEnv, args []string) error {
	return errors.New("not built yet")
}
