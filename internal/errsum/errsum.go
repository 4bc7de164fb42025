// Package errsum reduces the errors of parallel or repeated attempts
// (NUTS chains, learning rates of a sweep) to one error on one line: the
// attempts usually fail alike, and a command's failure should read as a
// single message, not one line per attempt.
package errsum

import "fmt"

// First returns the first non-nil error of errs, noting how many others
// failed as "(and N more <what> failed)"; nil when every entry is nil.
// The first error stays wrapped, so errors.Is and errors.As see it.
func First(errs []error, what string) error {
	var first error
	more := 0
	for _, err := range errs {
		switch {
		case err == nil:
		case first == nil:
			first = err
		default:
			more++
		}
	}
	if first != nil && more > 0 {
		return fmt.Errorf("%w (and %d more %s failed)", first, more, what)
	}
	return first
}
