//go:build !linux

package main

import "errors"

// limitAddressSpace is Linux only here; the tests that need it skip
// elsewhere.
func limitAddressSpace(uint64) error {
	return errors.New("no address-space limit on this system")
}
