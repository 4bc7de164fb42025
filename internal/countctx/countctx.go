// Package countctx holds a context for cancellation tests that counts how
// often the code under test looks at it and cancels itself at a chosen
// look: a cancel from inside the work, at a point fixed by the work done
// rather than by a clock, so the test holds on a machine of any speed.
package countctx

import (
	"context"
	"sync/atomic"
)

// Context is a cancellable context whose Err cancels it on the At-th
// call (never when At is 0) and counts every call.
type Context struct {
	context.Context
	cancel context.CancelFunc
	at     int64
	calls  atomic.Int64
}

// CancelAt returns a Context that cancels itself on the at-th call of Err
// (at = 0: never).
func CancelAt(at int64) *Context {
	ctx, cancel := context.WithCancel(context.Background())
	return &Context{Context: ctx, cancel: cancel, at: at}
}

// Err counts the call, cancels the context on the At-th and returns the
// context's error.
func (c *Context) Err() error {
	if c.calls.Add(1) == c.at {
		c.cancel()
	}
	return c.Context.Err()
}

// Calls is the number of Err calls so far.
func (c *Context) Calls() int64 { return c.calls.Load() }

// After is the number of Err calls after the one that cancelled (0 when
// none cancelled yet).
func (c *Context) After() int64 {
	if n := c.calls.Load(); c.at > 0 && n > c.at {
		return n - c.at
	}
	return 0
}

// Stop releases the context's resources.
func (c *Context) Stop() { c.cancel() }
